package daemon

import (
	"context"
	"crypto/sha256"
	"os"
	"slices"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/filestamp"
)

// watchConfig reloads when a config source changes (a cheap stat stamp
// each WatchInterval, then a content hash, so touching a file does not
// reload) or when Options.Reload fires (SIGHUP).
func (d *daemon) watchConfig(ctx context.Context) {
	sources := d.opts.Config.Sources
	stamps := stampAll(sources)
	sum := contentSum(sources)
	for {
		force := false
		select {
		case <-ctx.Done():
			return
		case <-d.opts.Reload:
			force = true
		case <-time.After(d.opts.WatchInterval):
		}
		if !force {
			now := stampAll(sources)
			if slices.Equal(now, stamps) {
				continue
			}
			stamps = now
			if s := contentSum(sources); s == sum {
				continue
			} else {
				sum = s
			}
		}
		d.reload(ctx)
	}
}

func stampAll(paths []string) []filestamp.Stamp {
	out := make([]filestamp.Stamp, len(paths))
	for i, p := range paths {
		out[i], _ = filestamp.Of(p)
	}
	return out
}

// contentSum hashes every source's bytes (a missing file hashes as empty
// with a marker, so deleting a file is a change).
func contentSum(paths []string) [32]byte {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			h.Write([]byte{1})
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// reload loads the config again and swaps it in, keeping every pool whose
// serverHash is unchanged and stopping the others. A config that fails to
// load keeps the old one.
func (d *daemon) reload(ctx context.Context) {
	old := d.state.Load()
	cfg, err := config.Load(old.cfg.Sources, d.opts.Self)
	if err != nil {
		d.log.Printf("reload: %v; keeping the previous configuration", err)
		return
	}
	st := newState(cfg)
	keep := make(map[config.ServerHash]bool, len(st.hashes))
	for _, h := range st.hashes {
		keep[h] = true
	}
	d.state.Store(st)
	d.pools.Retain(ctx, keep)
	for _, w := range cfg.Warnings {
		d.log.Printf("config: %s", w)
	}
	d.log.Printf("reloaded configuration: %d servers, schemaHash %s", len(st.names), st.schemaHash)
	if st.schemaHash != old.schemaHash {
		if err := d.writeInfo(); err != nil {
			d.log.Printf("%v", err)
		}
	}
	notify("STATUS=" + d.statusLine())
}
