package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// refresh refetches schemas (starting the servers it needs to).
//
// --json: api.RefreshResponse.
func refreshCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "refresh",
		Usage:     "re-read the tool schemas of one namespace or of all",
		ArgsUsage: "[NS]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("refresh takes at most one namespace")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Refresh(ctx, cmd.Args().First())
			if err != nil {
				return err
			}
			// Untrusted and unusable entries were not asked: they are
			// listed, not failures of this refresh.
			failed := false
			for _, n := range r.Namespaces {
				failed = failed || n.State == api.StateError
			}
			if jsonOut(cmd) {
				// The answer says which failed; the exit code is text's.
				if err := writeJSON(a.Stdout, r); err != nil || !failed {
					return err
				}
				return silent(ExitUnavailable)
			}
			rows := make([][]string, 0, len(r.Namespaces))
			for _, n := range r.Namespaces {
				state := n.State
				if n.Error != "" {
					state += ": " + api.FirstLine(n.Error)
				}
				rows = append(rows, []string{n.Name, strconv.Itoa(n.Tools), state})
			}
			if err := table(a.Stdout, []string{"NAMESPACE", "TOOLS", "STATE"}, rows); err != nil {
				return err
			}
			if !failed {
				return nil
			}
			// A failed server's own words, under the table.
			for _, n := range r.Namespaces {
				if tail := n.Stderr; n.State == api.StateError && tail != "" {
					fmt.Fprintf(a.Stderr, "mcpx: %s failed; its stderr ended with:\n", n.Name)
					for _, line := range strings.Split(strings.TrimRight(tail, "\n"), "\n") {
						fmt.Fprintf(a.Stderr, "  | %s\n", line)
					}
				}
			}
			return silent(ExitUnavailable)
		},
	}
}
