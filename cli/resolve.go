package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/resolve"
)

// resolve prints which daemon serves a directory: the document of GET
// /v1/resolve (api.Resolve), computed here from files. It never connects to
// a socket and never starts anything.
//
// --json: api.Resolve.
func resolveCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "resolve",
		Usage:     "show which daemon serves a directory (key, configs, socket, state)",
		ArgsUsage: "[DIR]",
		Description: "Prints the same document as GET /v1/resolve?dir=DIR (see docs/discovery.md).\n" +
			"DIR defaults to the working directory; a relative DIR is taken from it.\n" +
			"The answer describes the directory, not this invocation: MCPX_CONFIG,\n" +
			"MCPX_SOCKET and --config are not applied. Reads files only: it never\n" +
			"connects to a socket and never starts a daemon.",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("resolve takes at most one directory")
			}
			base, err := workDir(cmd)
			if err != nil {
				return err
			}
			dir := base
			if arg := cmd.Args().First(); arg != "" {
				dir = arg
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(base, dir)
				}
			}
			l, err := a.local()
			if err != nil {
				return err
			}
			// The manager a stopped key would get; detection failing is
			// not a reason to withhold the rest of the answer.
			var manager string
			if m, err := a.detect(ctx, l); err == nil {
				manager = m.Name()
			}
			r, err := resolve.DirWith(dir, l.paths, withoutOverrides(a.Getenv), resolve.Options{Self: l.self, Manager: manager})
			var de *resolve.DirError
			if errors.As(err, &de) {
				return &exitError{code: ExitUsage, kind: codeUsage, msg: sentence(de.Error())}
			}
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			return renderResolve(a.Stdout, r)
		},
	}
}

// renderResolve prints the document as aligned "name value" lines, one
// config per line.
func renderResolve(w io.Writer, r *api.Resolve) error {
	configs := strings.Join(r.Configs, "\n")
	if len(r.Configs) == 0 {
		configs = "(none: built-in default)"
	}
	rows := [][2]string{
		{"dir", r.Dir},
		{"daemonKey", r.DaemonKey},
		{"configs", configs},
		{"socket", r.Socket},
		{"manager", orDash(r.Manager)},
		{"state", r.State},
		{"schemaHash", orDash(r.SchemaHash)},
	}
	return fields(w, rows)
}

// fields prints name/value pairs with the values aligned; a value with
// several lines continues under itself.
func fields(w io.Writer, rows [][2]string) error {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		for i, line := range strings.Split(r[1], "\n") {
			name := r[0]
			if i > 0 {
				name = ""
			}
			if _, err := fmt.Fprintf(w, "%-*s  %s\n", width, name, line); err != nil {
				return err
			}
		}
	}
	return nil
}
