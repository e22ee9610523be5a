package cli

import (
	"context"
	"path/filepath"

	ucli "github.com/urfave/cli/v3"
)

func init() { register(serveCommand) }

// serve runs mcpx as one MCP server in front of every configured server:
// package serve needs mcp-go, so this execs `mcpxd serve`. Its flags are
// its own; the global -C and --config are passed on.
func serveCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:            "serve",
		Usage:           "serve every configured MCP server as one MCP server (stdio, or --http 127.0.0.1:PORT: /mcp and /mcp/NS)",
		ArgsUsage:       "[--http ADDR [--http-allow-remote] [--no-key]] [--expose all|search] [--ns a,b | --ns NS] [--print-config HOST]",
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			var args []string
			if dir := cmd.String("directory"); dir != "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return usagef("-C %s: %v", dir, err)
				}
				args = append(args, "-C", abs)
			}
			if file := cmd.String("config"); file != "" {
				abs, err := filepath.Abs(file)
				if err != nil {
					return usagef("--config %s: %v", file, err)
				}
				args = append(args, "-config", abs)
			}
			args = append(args, cmd.Args().Slice()...)
			return execDaemonBinary("serve", args)
		},
	}
}
