package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v3"
)

func init() { register(demoServerCommand) }

// demo-server serves the built-in demo MCP server on stdio (the server of
// the built-in default config).
func demoServerCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:   "demo-server",
		Usage:  "serve the built-in demo MCP server on stdin/stdout",
		Hidden: true,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if a.Hooks.DemoServer == nil {
				return fmt.Errorf("this build has no demo server")
			}
			return a.Hooks.DemoServer(ctx)
		},
	}
}
