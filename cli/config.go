package cli

import (
	"context"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
)

func init() { register(configCommand) }

// configDoc is `config --json`.
type configDoc struct {
	DaemonKey  config.DaemonKey          `json:"daemonKey"`
	SchemaHash config.SchemaHash         `json:"schemaHash"`
	Sources    []string                  `json:"sources"`
	Builtin    bool                      `json:"builtin"`
	Servers    map[string]*config.Server `json:"servers"`
	Settings   config.Settings           `json:"settings"`
	Warnings   []string                  `json:"warnings"`
}

// config prints the merged configuration (a valid config file, with the
// sources as comments) or, with --path, the source files nearest first.
//
// --json: configDoc.
func configCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "config",
		Usage: "print the merged configuration, or with --path the files it comes from",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "path", Usage: "print the config files in use, nearest first"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("config takes no arguments")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			cfg := c.Config()
			for _, w := range cfg.Warnings {
				fmt.Fprintf(a.Stderr, "mcpx: warning: %s\n", w)
			}
			sources := cfg.Sources
			if sources == nil {
				sources = []string{}
			}
			if jsonOut(cmd) {
				warnings := cfg.Warnings
				if warnings == nil {
					warnings = []string{}
				}
				return writeJSON(a.Stdout, configDoc{DaemonKey: c.Key(), SchemaHash: cfg.SchemaHash(), Sources: sources,
					Builtin: cfg.Builtin, Servers: cfg.Servers, Settings: cfg.Settings, Warnings: warnings})
			}
			if cmd.Bool("path") {
				if cfg.Builtin {
					fmt.Fprintln(a.Stderr, "mcpx: no config file found; using the built-in demo server (`mcpx init` writes one).")
				}
				for _, s := range sources {
					fmt.Fprintln(a.Stdout, s)
				}
				return nil
			}
			if cfg.Builtin {
				fmt.Fprintln(a.Stdout, "// built-in default: no config file found (`mcpx init` writes one)")
			} else {
				fmt.Fprintf(a.Stdout, "// merged from, nearest first:\n//   %s\n", strings.Join(sources, "\n//   "))
			}
			fmt.Fprintf(a.Stdout, "// daemonKey %s\n", c.Key())
			return writeJSON(a.Stdout, map[string]any{"mcpServers": cfg.Servers, "mcpx": cfg.Settings})
		},
	}
}
