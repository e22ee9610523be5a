package cli

import (
	"context"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
)

// configDoc is `config --json`.
type configDoc struct {
	DaemonKey  config.DaemonKey         `json:"daemonKey"`
	SchemaHash config.SchemaHash        `json:"schemaHash"`
	Sources    []string                 `json:"sources"`
	Files      []config.Source          `json:"files"`
	Builtin    bool                     `json:"builtin"`
	Servers    map[string]*configServer `json:"servers"`
	Shadowed   []config.Shadow          `json:"shadowed"`
	Settings   config.Settings          `json:"settings"`
	Warnings   []string                 `json:"warnings"`
}

// configServer is one server as `config --json` shows it: the definition
// and where it came from.
type configServer struct {
	*config.Server
	// Dir is where a stdio server runs when its entry names no cwd (the
	// project directory of its file, or $HOME).
	Dir       string   `json:"dir,omitempty"`
	Source    string   `json:"source,omitempty"`
	Host      string   `json:"host,omitempty"`
	Problem   string   `json:"problem,omitempty"`
	Untrusted string   `json:"untrusted,omitempty"`
	Ignored   []string `json:"ignoredKeys,omitempty"`
}

// config prints the merged configuration (a valid config file, with the
// sources, shadowed entries, ignored host keys and unusable entries as
// comments) or, with --path, the source files nearest first with their
// host, level and trust. `config add|remove|import` edit mcpx's own files
// (configedit.go).
//
// --json: configDoc.
func configCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "config",
		Usage: "print the merged configuration, or with --path the files it comes from",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "path", Usage: "print the config files in use, nearest first, with their host"},
		},
		Commands: configSubcommands(a),
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("config takes no arguments (subcommands: add, remove, import)")
			}
			c, err := a.fullClient(ctx, cmd)
			if err != nil {
				return err
			}
			cfg := c.Config()
			for _, w := range cfg.Warnings {
				fmt.Fprintf(a.Stderr, "mcpx: warning: %s\n", w)
			}
			switch {
			case jsonOut(cmd):
				return writeJSON(a.Stdout, newConfigDoc(c.Key(), cfg))
			case cmd.Bool("path"):
				return a.printConfigPaths(cfg)
			}
			a.printConfigComments(cfg, c.Key())
			return writeJSON(a.Stdout, map[string]any{"mcpServers": cfg.Servers, "mcpx": cfg.Settings})
		},
	}
}

// newConfigDoc is `config --json`, with empty lists as [].
func newConfigDoc(key config.DaemonKey, cfg *config.Config) configDoc {
	servers := map[string]*configServer{}
	for name, s := range cfg.Servers {
		cs := &configServer{Server: s, Source: s.Source, Host: s.Host, Problem: s.Problem, Untrusted: s.Untrusted, Ignored: s.Ignored}
		if s.URL == "" {
			cs.Dir = s.Dir
		}
		servers[name] = cs
	}
	return configDoc{DaemonKey: key, SchemaHash: cfg.SchemaHash(), Sources: orEmpty(cfg.Sources), Files: orEmpty(cfg.Files),
		Builtin: cfg.Builtin, Servers: servers, Shadowed: orEmpty(cfg.Shadowed), Settings: cfg.Settings, Warnings: orEmpty(cfg.Warnings)}
}

// orEmpty is list, or an empty list for nil (JSON [] rather than null).
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// printConfigPaths is `config --path`: the files, nearest first.
func (a *App) printConfigPaths(cfg *config.Config) error {
	if cfg.Builtin {
		fmt.Fprintln(a.Stderr, "mcpx: no config file found; using the built-in demo server (`mcpx init` writes one).")
	}
	rows := make([][]string, 0, len(cfg.Files))
	for _, f := range cfg.Files {
		rows = append(rows, []string{f.Path, f.Host, f.Level, trustWord(f)})
	}
	if len(rows) == 0 {
		return nil
	}
	return table(a.Stdout, []string{"FILE", "HOST", "LEVEL", "TRUST"}, rows)
}

// printConfigComments writes what the merged config printed below it
// cannot say, as comments: where it comes from, what is shadowed, and
// which servers are unusable or untrusted.
func (a *App) printConfigComments(cfg *config.Config, key config.DaemonKey) {
	if cfg.Builtin {
		fmt.Fprintln(a.Stdout, "// built-in default: no config file found (`mcpx init` writes one)")
	} else {
		fmt.Fprintln(a.Stdout, "// merged from, nearest first:")
		for _, f := range cfg.Files {
			fmt.Fprintf(a.Stdout, "//   %s (%s, %s, %s)\n", f.Path, f.Host, f.Level, trustWord(f))
		}
	}
	for _, sh := range cfg.Shadowed {
		fmt.Fprintf(a.Stdout, "// %s: the entry in %s is shadowed by %s\n", sh.Name, sh.Source, sh.By)
	}
	for _, name := range cfg.Names() {
		s := cfg.Servers[name]
		if len(s.Ignored) > 0 {
			fmt.Fprintf(a.Stdout, "// %s (%s): keys mcpx does not use: %s\n", name, s.Host, strings.Join(s.Ignored, ", "))
		}
		switch {
		case s.Self:
			fmt.Fprintf(a.Stdout, "// %s: skipped: %s\n", name, s.Problem)
		case s.Problem != "":
			fmt.Fprintf(a.Stdout, "// %s: not usable: %s\n", name, s.Problem)
		}
		if s.Untrusted != "" {
			fmt.Fprintf(a.Stdout, "// %s: untrusted: %s\n", name, s.Untrusted)
		}
	}
	fmt.Fprintf(a.Stdout, "// daemonKey %s\n", key)
}

// trustWord is a source's trust for people.
func trustWord(f config.Source) string {
	switch {
	case f.Error != "" && f.Why != "":
		return "not read (not yours)"
	case f.Error != "":
		return "unreadable"
	case f.Trusted:
		return "trusted"
	default:
		return "untrusted"
	}
}
