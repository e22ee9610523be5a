package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
)

// trustDoc is `trust --json` and `trust --list --json`.
type trustDoc struct {
	Trusted []trustEntry `json:"trusted"`
}

type trustEntry struct {
	Path      string    `json:"path"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
	// State (--list): "current" (the file still has the trusted content),
	// "changed" or "missing".
	State string `json:"state,omitempty"`
}

// trust records the current content of a project's config files as
// trusted (like `direnv allow`): with a FILE that file, with a DIR (default
// the working directory) that directory's project-level files (a parent
// directory's are trusted by their path, and named on stderr when they are
// not). A file owned by another user or writable by others is refused
// (exit 4).
//
// --json: trustDoc.
func trustCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "trust",
		Usage:     "allow a project's config files to start servers (records their current content)",
		ArgsUsage: "[DIR|FILE]",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "list", Usage: "list the trusted files"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			store := config.DefaultTrustStore(a.Getenv)
			if cmd.Bool("list") {
				if cmd.NArg() > 0 {
					return usagef("trust --list takes no arguments")
				}
				return a.listTrusted(cmd, store)
			}
			if cmd.NArg() > 1 {
				return usagef("trust takes at most one DIR or FILE")
			}
			files, parents, err := a.trustTargets(cmd)
			if err != nil {
				return err
			}
			doc := trustDoc{Trusted: []trustEntry{}}
			for _, f := range files {
				real, err := store.TrustFile(f)
				if errors.Is(err, config.ErrUntrustable) {
					return &exitError{code: ExitPolicy, msg: "mcpx: " + sentence(untrustableMsg(err))}
				}
				if err != nil {
					return err
				}
				rec, _, err := store.Lookup(real)
				if err != nil {
					return err
				}
				doc.Trusted = append(doc.Trusted, trustEntry{Path: rec.Path, SHA256: rec.SHA256, TrustedAt: rec.TrustedAt})
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, doc)
			}
			if len(doc.Trusted) == 0 {
				fmt.Fprintln(a.Stderr, "mcpx: no project config file here needs trust.")
			}
			for _, t := range doc.Trusted {
				fmt.Fprintf(a.Stdout, "trusted %s (sha256 %s)\n", t.Path, t.SHA256[:12])
			}
			for _, p := range parents {
				if !trustedNow(store, p) {
					fmt.Fprintf(a.Stderr, "mcpx: %s (a parent directory's) is not trusted; `mcpx trust %s` trusts it.\n", p, p)
				}
			}
			return nil
		},
	}
}

// untrust removes the trust records of a FILE or of a DIR's project files.
//
// --json: {"untrusted": [paths]}.
func untrustCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "untrust",
		Usage:     "withdraw trust from a project's config files",
		ArgsUsage: "[DIR|FILE]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("untrust takes at most one DIR or FILE")
			}
			store := config.DefaultTrustStore(a.Getenv)
			files, _, err := a.trustTargets(cmd)
			if err != nil {
				return err
			}
			out := []string{}
			for _, f := range files {
				real, err := filepath.EvalSymlinks(f)
				if err != nil {
					real = f
				}
				removed, err := store.Untrust(real)
				if err != nil {
					return err
				}
				if removed {
					out = append(out, real)
				}
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, map[string][]string{"untrusted": out})
			}
			if len(out) == 0 {
				fmt.Fprintln(a.Stderr, "mcpx: nothing here was trusted.")
			}
			for _, p := range out {
				fmt.Fprintf(a.Stdout, "untrusted %s\n", p)
			}
			return nil
		},
	}
}

// trustTargets are the files `trust`/`untrust` act on: the FILE argument,
// or the project-level config files of the DIR argument (default the
// working directory, -C honoured) — that directory's own, not a parent's,
// which parents lists (they are trusted by their path).
func (a *App) trustTargets(cmd *ucli.Command) (files, parents []string, err error) {
	arg := cmd.Args().First()
	dir, err := workDir(cmd)
	if err != nil {
		return nil, nil, err
	}
	if arg == "" && cmd.String("config") != "" {
		// The one file --config selects (relative to the working
		// directory, as everywhere else).
		if arg, err = filepath.Abs(cmd.String("config")); err != nil {
			return nil, nil, usagef("--config %s: %v", cmd.String("config"), err)
		}
	}
	if arg != "" {
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(dir, arg)
		}
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, nil, usagef("%s: %v", cmd.Args().First(), err)
		}
		if !fi.IsDir() {
			return []string{arg}, nil, nil
		}
		dir = arg
	}
	sources, err := config.Discover(dir, withoutOverrides(a.Getenv))
	if err != nil {
		return nil, nil, err
	}
	files, parents = config.ProjectFilesIn(dir, sources, a.Getenv)
	return files, parents, nil
}

// trustedNow reports whether path's current content is trusted.
func trustedNow(store *config.TrustStore, path string) bool {
	rec, ok, err := store.Lookup(path)
	if err != nil || !ok {
		return false
	}
	b, err := config.ReadFile(path)
	return err == nil && config.Digest(b) == rec.SHA256
}

func (a *App) listTrusted(cmd *ucli.Command, store *config.TrustStore) error {
	recs, err := store.List()
	if err != nil {
		return err
	}
	doc := trustDoc{Trusted: []trustEntry{}}
	for _, r := range recs {
		e := trustEntry{Path: r.Path, SHA256: r.SHA256, TrustedAt: r.TrustedAt, State: "current"}
		b, err := config.ReadFile(r.Path)
		switch {
		case err != nil:
			e.State = "missing"
		case config.Digest(b) != r.SHA256:
			e.State = "changed"
		}
		doc.Trusted = append(doc.Trusted, e)
	}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, doc)
	}
	rows := make([][]string, 0, len(doc.Trusted))
	for _, e := range doc.Trusted {
		rows = append(rows, []string{e.Path, e.State, e.TrustedAt.Local().Format("2006-01-02 15:04")})
	}
	return table(a.Stdout, []string{"FILE", "STATE", "TRUSTED"}, rows)
}

// untrustableMsg is the refusal and what it means.
func untrustableMsg(err error) string {
	return err.Error() + "; mcpx never trusts such a file"
}
