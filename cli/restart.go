package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v3"
)

// restart stops running server instances so the next call starts fresh.
//
// --json: api.RestartResponse.
func restartCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "restart",
		Usage:     "stop the running instances of one namespace or of all; the next call starts them fresh",
		ArgsUsage: "[NS]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("restart takes at most one namespace")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Restart(ctx, cmd.Args().First())
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			plural := "s"
			if r.Stopped == 1 {
				plural = ""
			}
			_, err = fmt.Fprintf(a.Stdout, "stopped %d instance%s\n", r.Stopped, plural)
			return err
		},
	}
}
