package cli

import (
	"context"
	"strconv"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func init() { register(refreshCommand) }

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
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			rows := make([][]string, 0, len(r.Namespaces))
			failed := false
			for _, n := range r.Namespaces {
				state := n.State
				if n.Error != "" {
					state += ": " + api.FirstLine(n.Error)
					// Untrusted and unusable entries were not asked:
					// they are listed, not failures of this refresh.
					failed = failed || n.State == api.StateError
				}
				rows = append(rows, []string{n.Name, strconv.Itoa(n.Tools), state})
			}
			if err := table(a.Stdout, []string{"NAMESPACE", "TOOLS", "STATE"}, rows); err != nil {
				return err
			}
			if failed {
				return silent(ExitUnavailable)
			}
			return nil
		},
	}
}
