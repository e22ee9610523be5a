package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/search"
)

// configSubcommands are `config add`, `config remove` and `config import`:
// they edit mcpx's own file here (.mcpx.json) or, with --user, the user
// file, keeping the rest of an existing file as written. A file mcpx
// writes is trusted on write, unless it held content the user had not
// trusted before the edit.
func configSubcommands(a *App) []*ucli.Command {
	userFlag := &ucli.BoolFlag{Name: "user", Usage: "edit the user file ($XDG_CONFIG_HOME/mcpx/config.json) instead of .mcpx.json here"}
	forceFlag := &ucli.BoolFlag{Name: "force", Usage: "replace a server of the same name"}
	return []*ucli.Command{
		{
			Name:      "add",
			Usage:     "add a server: NAME -- COMMAND [ARGS…], or NAME --url URL",
			ArgsUsage: "NAME [-- COMMAND [ARGS…]]",
			Flags: []ucli.Flag{userFlag, forceFlag,
				&ucli.StringFlag{Name: "url", Usage: "the server's URL (streamable HTTP)"},
				&ucli.BoolFlag{Name: "sse", Usage: "the URL speaks the older SSE transport"},
				&ucli.StringSliceFlag{Name: "header", Usage: "an HTTP header K=V (repeatable)"},
				&ucli.StringSliceFlag{Name: "env", Usage: "an environment variable K=V for the server (repeatable)"},
			},
			Action: func(ctx context.Context, cmd *ucli.Command) error { return a.configAdd(cmd) },
		},
		{
			Name:      "remove",
			Usage:     "remove a server from mcpx's own file",
			ArgsUsage: "NAME",
			Flags:     []ucli.Flag{userFlag},
			Action:    func(ctx context.Context, cmd *ucli.Command) error { return a.configRemove(cmd) },
		},
		{
			Name:      "import",
			Usage:     "copy a host's servers into mcpx's own file (hosts: " + strings.Join(config.HostNames()[1:], ", ") + ")",
			ArgsUsage: "HOST",
			Flags:     []ucli.Flag{userFlag, forceFlag},
			Action:    func(ctx context.Context, cmd *ucli.Command) error { return a.configImport(ctx, cmd) },
		},
	}
}

// editTarget is the file an edit command writes.
func (a *App) editTarget(cmd *ucli.Command) (string, error) {
	if cmd.Bool("user") {
		return config.UserConfigFile(a.Getenv), nil
	}
	dir, err := workDir(cmd)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ".mcpx.json"), nil
}

// editFile applies edit to path's content and writes the result, trusting
// it when the user wrote it with mcpx (and it held nothing untrusted).
func (a *App) editFile(cmd *ucli.Command, path string, edit func([]byte) ([]byte, error)) (trusted bool, err error) {
	old, err := config.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	store := config.DefaultTrustStore(a.Getenv)
	wasTrusted := len(old) == 0 || cmd.Bool("user")
	if !wasTrusted {
		if rec, ok, err := store.Lookup(path); err == nil && ok && rec.SHA256 == config.Digest(old) {
			wasTrusted = true
		}
	}
	out, err := edit(old)
	if err != nil {
		return false, err
	}
	if err := config.WriteConfigFile(path, out); err != nil {
		return false, err
	}
	if cmd.Bool("user") {
		return true, nil
	}
	if !wasTrusted {
		return false, nil
	}
	if _, err := store.TrustFile(path); err != nil {
		return false, err
	}
	return true, nil
}

func (a *App) configAdd(cmd *ucli.Command) error {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return usagef("config add needs a NAME")
	}
	name, command := args[0], args[1:]
	if name == "" || strings.ContainsAny(name, ". \t\n") {
		return usagef("server name %q must not be empty or contain dots or spaces (tools are addressed as NAME.TOOL)", name)
	}
	url := cmd.String("url")
	switch {
	case url == "" && len(command) == 0:
		return usagef("config add %s needs a command (after --) or --url URL", name)
	case url != "" && len(command) > 0:
		return usagef("config add %s: give a command or --url, not both", name)
	case url == "" && (cmd.Bool("sse") || len(cmd.StringSlice("header")) > 0):
		return usagef("--sse and --header need --url")
	}
	s := &config.Server{Command: "", URL: url}
	if len(command) > 0 {
		s.Command, s.Args = command[0], command[1:]
	}
	if cmd.Bool("sse") {
		s.Transport = config.TransportSSE
	}
	var err error
	if s.Env, err = pairs("--env", cmd.StringSlice("env")); err != nil {
		return err
	}
	if s.Headers, err = pairs("--header", cmd.StringSlice("header")); err != nil {
		return err
	}
	path, err := a.editTarget(cmd)
	if err != nil {
		return err
	}
	trusted, err := a.editFile(cmd, path, func(src []byte) ([]byte, error) {
		return config.AddServer(path, src, name, config.EntryJSON(s), cmd.Bool("force"))
	})
	if errors.Is(err, config.ErrServerExists) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	return a.edited(cmd, "added", path, []string{name}, nil, trusted)
}

func (a *App) configRemove(cmd *ucli.Command) error {
	if cmd.NArg() != 1 {
		return usagef("config remove needs exactly one NAME")
	}
	name := cmd.Args().First()
	path, err := a.editTarget(cmd)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return usagef("%s: %v", path, err)
	}
	trusted, err := a.editFile(cmd, path, func(src []byte) ([]byte, error) {
		return config.RemoveServer(path, src, name)
	})
	if errors.Is(err, config.ErrNoServer) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	return a.edited(cmd, "removed", path, []string{name}, nil, trusted)
}

func (a *App) configImport(ctx context.Context, cmd *ucli.Command) error {
	if cmd.NArg() != 1 {
		return usagef("config import needs exactly one HOST (%s)", strings.Join(config.HostNames()[1:], ", "))
	}
	host := cmd.Args().First()
	if host == "mcpx" || !slices.Contains(config.HostNames(), host) {
		msg := fmt.Sprintf("unknown host %q (hosts: %s)", host, strings.Join(config.HostNames()[1:], ", "))
		if near := search.Suggest(host, config.HostNames()[1:]); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return usagef("%s", msg)
	}
	dir, err := workDir(cmd)
	if err != nil {
		return err
	}
	getenv := withoutOverrides(a.Getenv)
	sources, err := config.Discover(dir, getenv)
	if err != nil {
		return err
	}
	var mine []string
	for _, s := range sources {
		if config.SourceHost(s, getenv) == host {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		return usagef("no %s config file found here or in your home", host)
	}
	self, _ := os.Executable()
	cfg, err := config.LoadWith(mine, config.LoadOptions{Self: self, Getenv: getenv})
	if err != nil {
		return err
	}
	path, err := a.editTarget(cmd)
	if err != nil {
		return err
	}
	var added, skipped []string
	trusted, err := a.editFile(cmd, path, func(src []byte) ([]byte, error) {
		for _, name := range cfg.Names() {
			s := cfg.Servers[name]
			switch {
			case s.Untrusted != "":
				skipped = append(skipped, fmt.Sprintf("%s (%s)", name, strings.TrimSuffix(s.Untrusted, ".")))
				continue
			case s.Problem != "":
				skipped = append(skipped, fmt.Sprintf("%s (%s)", name, s.Problem))
				continue
			}
			out, err := config.AddServer(path, src, name, config.EntryJSON(s), cmd.Bool("force"))
			if errors.Is(err, config.ErrServerExists) {
				skipped = append(skipped, name+" (already in "+path+"; --force replaces it)")
				continue
			}
			if err != nil {
				return nil, err
			}
			src, added = out, append(added, name)
		}
		return src, nil
	})
	if err != nil {
		return err
	}
	return a.edited(cmd, "imported", path, added, skipped, trusted)
}

// edited reports an edit.
func (a *App) edited(cmd *ucli.Command, verb, path string, names, skipped []string, trusted bool) error {
	if names == nil {
		names = []string{}
	}
	if skipped == nil {
		skipped = []string{}
	}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, map[string]any{"path": path, verb: names, "skipped": skipped, "trusted": trusted})
	}
	if len(names) > 0 {
		fmt.Fprintf(a.Stdout, "%s %s in %s\n", verb, strings.Join(names, ", "), path)
	}
	for _, s := range skipped {
		fmt.Fprintf(a.Stderr, "mcpx: skipped %s.\n", s)
	}
	if !trusted {
		fmt.Fprintf(a.Stderr, "mcpx: %s held content you had not trusted; read it, then run `mcpx trust %s`.\n", path, path)
	}
	return nil
}

// pairs reads K=V flags.
func pairs(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("%s %q: want K=V", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}
