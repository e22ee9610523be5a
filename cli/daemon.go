package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
)

func init() { register(daemonCommand) }

// daemon runs the service process; the units, agents and the direct manager
// start it. Its errors go to stderr (the journal or the log file).
func daemonCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:   "daemon",
		Usage:  "run the daemon for a key (started by the service manager)",
		Hidden: true,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "key", Required: true, Usage: "daemon `KEY`"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if a.Hooks.Daemon == nil {
				return fmt.Errorf("this build has no daemon")
			}
			err := a.Hooks.Daemon(ctx, config.DaemonKey(cmd.String("key")))
			if err == nil {
				return nil
			}
			code := ExitToolError
			if a.Hooks.DaemonExitCode != nil {
				code = a.Hooks.DaemonExitCode(err)
			}
			return &exitError{code: code, kind: codeInternal, msg: "daemon: " + err.Error()}
		},
	}
}
