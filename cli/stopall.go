package cli

import (
	"context"
	"fmt"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/resolve"
	"github.com/mcpx-dev/mcpx/service"
)

// stopTarget is one daemon `stop --all` stops, with the manager that owns
// it.
type stopTarget struct {
	key config.DaemonKey
	m   service.Manager
}

// everyDaemon is what `stop --all` stops: every key the chosen manager
// lists, plus every daemon whose info file says it runs (a daemon started
// under another manager, e.g. by MCPX_SERVICE=direct while systemd is the
// default). A running daemon is stopped through the manager its info file
// names, so a direct daemon gets SIGTERM and a systemd one a StopUnit.
func (a *App) everyDaemon(ctx context.Context, m service.Manager) ([]stopTarget, error) {
	l, err := a.local()
	if err != nil {
		return nil, err
	}
	states, err := m.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list daemons: %w", err)
	}
	keys, err := resolve.ListKeys(l.paths)
	if err != nil {
		return nil, err
	}
	owner := map[config.DaemonKey]string{}
	for _, ki := range keys {
		if ki.State == api.DaemonRunning {
			owner[config.DaemonKey(ki.DaemonKey)] = ki.Manager
		}
	}
	others := map[string]service.Manager{}
	pick := func(key config.DaemonKey) service.Manager {
		name, ok := owner[key]
		if !ok || name == "" || name == m.Name() {
			return m
		}
		if o, ok := others[name]; ok {
			return o
		}
		var o service.Manager
		switch name {
		case service.NameDirect:
			o = service.NewDirect(l.paths, l.self)
		case service.NameSystemd:
			o = service.NewSystemd(a.Getenv, l.paths, l.self)
		case service.NameLaunchd:
			o = service.NewLaunchd(a.Getenv, l.paths, l.self)
		default:
			o = m
		}
		others[name] = o
		return o
	}
	var out []stopTarget
	seen := map[config.DaemonKey]bool{}
	for _, st := range states {
		if !seen[st.Key] {
			seen[st.Key] = true
			out = append(out, stopTarget{key: st.Key, m: pick(st.Key)})
		}
	}
	for _, ki := range keys {
		k := config.DaemonKey(ki.DaemonKey)
		if ki.State == api.DaemonRunning && !seen[k] {
			seen[k] = true
			out = append(out, stopTarget{key: k, m: pick(k)})
		}
	}
	return out, nil
}
