package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
)

// cacheLsDoc is `mcpx cache ls --json`.
type cacheLsDoc struct {
	Dir        string        `json:"dir"`
	Entries    []cache.Entry `json:"entries"`
	TotalBytes int64         `json:"totalBytes"`
}

// cacheGCDoc is `mcpx cache gc --json`.
type cacheGCDoc struct {
	Dir    string         `json:"dir"`
	Policy cache.Policy   `json:"policy"`
	Report cache.GCReport `json:"report"`
}

// cacheVerifyDoc is `mcpx cache verify --json`.
type cacheVerifyDoc struct {
	Dir      string          `json:"dir"`
	Problems []cache.Problem `json:"problems"`
}

// cache works on the content-addressed store directly (files under
// $XDG_CACHE_HOME/mcpx/cas); no daemon is involved. The schema refs are
// registered as roots, so ls shows them and gc keeps referenced snapshots.
func cacheCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "cache",
		Usage: "inspect, collect and verify the content-addressed cache",
		Commands: []*ucli.Command{
			{
				Name:   "ls",
				Usage:  "list entries, most recently used first",
				Action: func(_ context.Context, cmd *ucli.Command) error { return a.cacheLs(cmd) },
			},
			{
				Name:  "gc",
				Usage: "evict old and least-recently-used entries (limits from the config's cache settings)",
				Flags: []ucli.Flag{
					&ucli.StringFlag{Name: "max-bytes", Usage: "keep at most `SIZE` (e.g. 512MiB, 2GB; -1: no limit)"},
					&ucli.StringFlag{Name: "max-age", Usage: "remove entries unused for `DURATION` (e.g. 7d, 72h; -1: no limit)"},
				},
				Action: func(_ context.Context, cmd *ucli.Command) error { return a.cacheGC(cmd) },
			},
			{
				Name:   "verify",
				Usage:  "hash every entry; remove corrupt ones and report them",
				Action: func(_ context.Context, cmd *ucli.Command) error { return a.cacheVerify(cmd) },
			},
		},
	}
}

// cacheLs is `cache ls`.
func (a *App) cacheLs(cmd *ucli.Command) error {
	store, err := a.openStore()
	if err != nil {
		return err
	}
	entries, err := store.List()
	if err != nil {
		return err
	}
	doc := cacheLsDoc{Dir: store.Dir(), Entries: entries}
	if doc.Entries == nil {
		doc.Entries = []cache.Entry{}
	}
	for _, e := range entries {
		doc.TotalBytes += e.Size
	}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, doc)
	}
	return renderCacheLs(a.Stdout, doc, time.Now())
}

// cacheGC is `cache gc`.
func (a *App) cacheGC(cmd *ucli.Command) error {
	policy, err := a.cachePolicy(cmd)
	if err != nil {
		return err
	}
	store, err := a.openStore()
	if err != nil {
		return err
	}
	rep, err := store.GC(policy)
	if err != nil {
		return err
	}
	if rep.Removed == nil {
		rep.Removed = []cache.Entry{}
	}
	doc := cacheGCDoc{Dir: store.Dir(), Policy: policy, Report: rep}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, doc)
	}
	_, err = fmt.Fprintf(a.Stdout, "removed %d entries (%s), kept %d (%s); %d temp files and %d dead leases cleaned\n",
		len(rep.Removed), humanBytes(rep.FreedBytes), rep.Kept, humanBytes(rep.KeptBytes), rep.TempRemoved, rep.LeasesRemoved)
	return err
}

// cacheVerify is `cache verify`: a corrupt entry makes it exit 1.
func (a *App) cacheVerify(cmd *ucli.Command) error {
	store, err := a.openStore()
	if err != nil {
		return err
	}
	probs, err := store.Verify()
	if err != nil {
		return err
	}
	doc := cacheVerifyDoc{Dir: store.Dir(), Problems: probs}
	if doc.Problems == nil {
		doc.Problems = []cache.Problem{}
	}
	if jsonOut(cmd) {
		if err := writeJSON(a.Stdout, doc); err != nil {
			return err
		}
	} else {
		for _, p := range probs {
			d := string(p.Digest)
			if d == "" {
				d = "-"
			}
			fmt.Fprintf(a.Stdout, "%s  %s\n", d, p.Reason)
		}
		if len(probs) == 0 {
			fmt.Fprintln(a.Stdout, "every entry verified")
		}
	}
	if len(probs) > 0 {
		return silent(ExitToolError)
	}
	return nil
}

// openStore opens the store with the schema refs as roots.
func (a *App) openStore() (*cache.Store, error) {
	paths, err := a.paths()
	if err != nil {
		return nil, err
	}
	store, err := cache.OpenStore(paths.CAS())
	if err != nil {
		return nil, err
	}
	cache.NewSchemas(store, paths.Schemas())
	return store, nil
}

// cachePolicy is the config's cache settings (this directory's), with
// --max-bytes and --max-age over them. A config that does not load leaves
// the defaults, with a warning: collecting must not depend on a config.
func (a *App) cachePolicy(cmd *ucli.Command) (cache.Policy, error) {
	policy := cache.DefaultPolicy()
	if l, err := a.local(); err == nil {
		if dir, err := workDir(cmd); err == nil {
			getenv := a.Getenv
			if file := cmd.String("config"); file != "" {
				getenv = override(a.Getenv, "MCPX_CONFIG", file)
			}
			cfg, err := config.LoadDir(dir, getenv, l.self)
			if err != nil {
				fmt.Fprintf(a.Stderr, "mcpx: %s; using the default cache limits.\n", strings.TrimSuffix(err.Error(), "."))
			} else {
				policy = cache.PolicyFrom(cfg.Settings.Cache)
			}
		}
	}
	if s := cmd.String("max-bytes"); s != "" {
		n, err := parseBytes(s)
		if err != nil {
			return policy, usagef("--max-bytes: %v", err)
		}
		policy.MaxBytes = n
	}
	if s := cmd.String("max-age"); s != "" {
		if s == "-1" {
			policy.MaxAge = cache.NoLimit
		} else {
			d, err := config.ParseDuration(s)
			if err != nil || d < 0 {
				return policy, usagef("--max-age: want a form like 7d or 72h, or -1 for no limit, not %q", s)
			}
			policy.MaxAge = d
		}
	}
	return policy, nil
}

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// parseBytes reads "512MiB", "2GB", "100" (bytes) or "-1" (no limit), the
// forms the config's cache.maxBytes accepts (plus K/M/G for KiB/MiB/GiB).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return cache.NoLimit, nil
	}
	num, mult := s, 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("want a size like 512MiB or 2GB, or -1 for no limit, not %q", s)
	}
	return int64(f * mult), nil
}

// humanBytes is n in binary units ("1.5 MiB").
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func renderCacheLs(w io.Writer, doc cacheLsDoc, now time.Time) error {
	rows := make([][]string, 0, len(doc.Entries))
	for _, e := range doc.Entries {
		refs := strings.Join(e.Refs, ", ")
		if e.Leases > 0 {
			refs = strings.TrimPrefix(refs+fmt.Sprintf(", %d leases", e.Leases), ", ")
		}
		rows = append(rows, []string{e.Digest.Short(), humanBytes(e.Size), ago(now.Sub(e.LastUse)) + " ago", orDash(refs)})
	}
	if err := table(w, []string{"DIGEST", "SIZE", "USED", "REFS"}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d entries, %s in %s\n", len(doc.Entries), humanBytes(doc.TotalBytes), doc.Dir)
	return err
}
