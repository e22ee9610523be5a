package cli

import (
	"context"

	ucli "github.com/urfave/cli/v3"
)

// daemon runs the service process, which is mcpxd's (`mcpxd daemon --key
// K`); the units, agents and the direct manager start mcpxd directly.
func daemonCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:            "daemon",
		Usage:           "run the daemon for a key (execs mcpxd daemon; started by the service manager)",
		ArgsUsage:       "--key KEY",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			return execDaemonBinary("daemon", cmd.Args().Slice())
		},
	}
}
