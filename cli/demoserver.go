package cli

import (
	"context"

	ucli "github.com/urfave/cli/v3"
)

// demo-server serves the built-in demo MCP server on stdio by exec'ing
// `mcpxd demo-server` (the built-in default config runs mcpxd directly).
func demoServerCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:            "demo-server",
		Usage:           "serve the built-in demo MCP server on stdin/stdout (execs mcpxd demo-server)",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			return execDaemonBinary("demo-server", cmd.Args().Slice())
		},
	}
}
