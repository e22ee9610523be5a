package cli

import (
	"context"
	"strconv"

	ucli "github.com/urfave/cli/v3"
)

func init() { register(lsCommand) }

// ls lists namespaces, or one namespace's tools, from the daemon's schema
// cache; it never starts a server.
//
// --json: api.NamespacesResponse without NS, api.ToolsResponse with NS.
func lsCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "ls",
		Usage:     "list namespaces, or the tools of one",
		ArgsUsage: "[NS]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("ls takes at most one namespace")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			if ns := cmd.Args().First(); ns != "" {
				if jsonOut(cmd) {
					r, err := c.Tools(ctx, ns)
					if err != nil {
						return err
					}
					return writeJSON(a.Stdout, r)
				}
				// The table needs no definitions.
				r, err := c.ToolsBrief(ctx, ns)
				if err != nil {
					return err
				}
				rows := make([][]string, 0, len(r.Tools))
				for _, t := range r.Tools {
					rows = append(rows, []string{t.Name, summary(t.Description)})
				}
				return table(a.Stdout, []string{"TOOL", "DESCRIPTION"}, rows)
			}
			r, err := c.Namespaces(ctx)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			rows := make([][]string, 0, len(r.Namespaces))
			for _, n := range r.Namespaces {
				state := n.State
				if n.State == "error" && n.Error != "" {
					state += ": " + firstLine(n.Error)
				}
				rows = append(rows, []string{n.Name, strconv.Itoa(n.Tools), strconv.Itoa(n.Live), state, summary(n.Description)})
			}
			return table(a.Stdout, []string{"NAMESPACE", "TOOLS", "LIVE", "STATE", "DESCRIPTION"}, rows)
		},
	}
}
