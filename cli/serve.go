package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v3"
)

// serve runs mcpx as one MCP server in front of every configured server:
// package serve needs mcp-go, so this execs `mcpxd serve`. Its flags are
// its own; the global -C and --config are passed on.
func serveCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "serve",
		Usage:     "serve every configured MCP server as one MCP server (stdio, or --http 127.0.0.1:PORT: /mcp and /mcp/NS)",
		ArgsUsage: "[--http ADDR [--http-allow-remote] [--no-key]] [--expose all|search] [--ns a,b | --ns NS] [--print-config HOST]",
		// mcpxd serve parses its own flags (and answers --help); these
		// are declared for `mcpx help serve`, the man page and completion,
		// and to name a mistyped one the way every command does.
		// TestServeFlagsMatchMcpxd keeps them in step with serve.Main.
		SkipFlagParsing: true,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "http", Usage: "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765) instead of stdio"},
			&ucli.BoolFlag{Name: "http-allow-remote", Usage: "allow --http on an address that is not loopback"},
			&ucli.BoolFlag{Name: "no-key", Usage: "serve HTTP without the serve key: any local user could call your tools"},
			&ucli.StringFlag{Name: "expose", Usage: "`MODE`: all (every tool as NS.TOOL) or search (search_tools, describe_tool, call_tool)", Value: "all"},
			&ucli.StringFlag{Name: "ns", Usage: "serve only these namespaces (`a,b`); one namespace alone is served under its server's own names"},
			&ucli.StringFlag{Name: "print-config", Usage: "print the snippet that registers mcpx in `HOST`'s config and exit (claude-code, claude-desktop, cursor, vscode, codex, gemini)"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if err := unknownServeFlag(cmd); err != nil {
				return err
			}
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
			if jsonOut(cmd) {
				// A failure to start is then an error document on
				// stdout too, as for every command under --json.
				args = append(args, "-json")
			}
			args = append(args, cmd.Args().Slice()...)
			return execDaemonBinary("serve", args)
		},
	}
}

// unknownServeFlag is the usage error for a flag serve does not have, with
// the nearest one, as urfave/cli reports it for the other commands (serve's
// line is not parsed here: mcpxd serve parses it, as Go's flag package
// does: flags end at the first argument that is not one, or at "--").
func unknownServeFlag(cmd *ucli.Command) error {
	takesValue := map[string]bool{"C": true, "config": true}
	known := map[string]bool{"h": true, "help": true, "C": true, "config": true, "json": true}
	for _, f := range cmd.Flags {
		_, isBool := f.(*ucli.BoolFlag)
		for _, n := range f.Names() {
			known[n], takesValue[n] = true, !isBool
		}
	}
	args := cmd.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !known[name] {
			return &usageError{err: fmt.Errorf("unknown flag %s%s", writtenDashes(name, args), name), cmd: cmd.FullName(), suggest: nearestFlag(cmd, name)}
		}
		if takesValue[name] && !hasValue {
			i++ // its value
		}
	}
	return nil
}
