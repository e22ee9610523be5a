package daemon

import (
	"context"

	"github.com/mcpx-dev/mcpx/config"
)

// A config edit applies on the next command: every client request carries
// the stamp of the configuration the client loaded (api.HeaderConfigStamp);
// a daemon holding another stamp reloads before answering (freshen). There
// is no polling. SIGHUP (Options.Reload) reloads too.

// watchConfig reloads when Options.Reload fires (SIGHUP).
func (d *daemon) watchConfig(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.opts.Reload:
			d.reloadMu.Lock()
			d.reload(ctx)
			d.reloadMu.Unlock()
		}
	}
}

// freshen reloads the config when the client's stamp differs from the
// loaded one. Concurrent requests with the same new stamp reload once.
//
// A client whose view differs from the daemon's even after a reload (its
// environment names other user files, say) would otherwise cost a reload on
// every request: a stamp that a reload did not reach is remembered and not
// chased again until the loaded configuration changes.
//
// ctx is the request's: the reload outlives a caller that gives up (it
// stops old pools), so it runs without ctx's cancellation.
func (d *daemon) freshen(ctx context.Context, stamp string) {
	if stamp == "" || stamp == d.state.Load().cfg.Stamp {
		return // every request but the first after an edit: nothing made
	}
	ctx = context.WithoutCancel(ctx)
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	st := d.state.Load()
	if stamp == st.cfg.Stamp || (stamp == d.unreached && st == d.unreachedAt) {
		return
	}
	d.reload(ctx)
	if now := d.state.Load(); now.cfg.Stamp != stamp {
		d.unreached, d.unreachedAt = stamp, now
	}
}

// load reads the config sources the way the daemon was started with.
func (d *daemon) load(sources []string) (*config.Config, error) {
	return config.LoadWith(sources, config.LoadOptions{Self: d.opts.Self, Getenv: d.getenv, Trust: trustStore(d.opts.Paths)})
}

// trustStore is the trust store under paths' state directory (the one the
// client handed over, which may not be the daemon's own XDG_STATE_HOME);
// nil, the default, when paths has none.
func trustStore(paths config.Paths) *config.TrustStore {
	if paths.State == "" {
		return nil
	}
	return config.TrustStoreAt(paths.State)
}

// reload loads the config again and swaps it in, keeping every pool whose
// serverHash is unchanged and stopping the others. A config that fails to
// load keeps the old one. Callers hold reloadMu.
func (d *daemon) reload(ctx context.Context) {
	old := d.state.Load()
	cfg, err := d.load(old.cfg.Sources)
	if err != nil {
		d.log.Printf("reload: %v; keeping the previous configuration", err)
		return
	}
	if cfg.Stamp == old.cfg.Stamp {
		return
	}
	st := newState(cfg)
	keep := make(map[config.ServerHash]bool, len(st.hashes))
	for name, h := range st.hashes {
		if runnable(cfg.Servers[name]) == nil {
			keep[h] = true
		}
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
