package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/version"
)

func (d *daemon) serveHealth(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, api.Health{OK: true, DaemonKey: string(d.opts.Key), Pid: os.Getpid(), Version: version.String(), Binary: d.binary})
}

func (d *daemon) serveStatus(w http.ResponseWriter, r *http.Request) error {
	st := d.state.Load()
	nss := d.namespaces(st)
	live := 0
	for _, ns := range nss {
		live += ns.Live
	}
	return writeJSON(w, api.Status{
		DaemonKey:  string(d.opts.Key),
		SchemaHash: string(st.schemaHash),
		Pid:        os.Getpid(),
		Manager:    d.opts.Manager,
		Configs:    configs(st),
		Version:    version.String(),
		StartedAt:  d.started,
		Servers:    len(st.names),
		Live:       live,
		Calls:      d.calls.Load(),
		Namespaces: nss,
	})
}

// configs is never null on the wire.
func configs(st *state) []string {
	if st.cfg.Sources == nil {
		return []string{}
	}
	return st.cfg.Sources
}

// serveRestart stops one namespace's instances (or all); the next call
// starts fresh ones.
func (d *daemon) serveRestart(w http.ResponseWriter, r *http.Request) error {
	var req api.RestartRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	st := d.state.Load()
	n := 0
	if req.Namespace == "" {
		n = d.pools.Restart(r.Context(), "")
	} else {
		if _, err := st.server(req.Namespace); err != nil {
			return err
		}
		n = d.pools.Restart(r.Context(), st.hashes[req.Namespace])
	}
	d.log.Printf("restart %q: stopped %d instances", req.Namespace, n)
	return writeJSON(w, api.RestartResponse{Stopped: n})
}

// serveShutdown answers, then the daemon exits as on SIGTERM; when another
// build is installed at its path now (an upgrade), it first hands its
// socket to that build (handoff.go).
func (d *daemon) serveShutdown(w http.ResponseWriter, r *http.Request) error {
	var req api.ShutdownRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := writeJSON(w, struct {
		OK bool `json:"ok"`
	}{true}); err != nil {
		return err
	}
	switch {
	case req.Binary != "" && req.Binary != d.binary:
		// An upgrade already replaced the daemon the client saw: this is
		// its successor (a call answered by the old one asked late).
		return nil
	case d.newerBuildInstalled():
		d.handOffAsked.Store(true)
		d.stop("shutdown requested: a newer build is installed")
	default:
		d.stop("shutdown requested")
	}
	return nil
}

// statusLine is the sd_notify STATUS= text.
func (d *daemon) statusLine() string {
	st := d.state.Load()
	line := fmt.Sprintf("%d servers, %d live, %d calls", len(st.names), d.live(), d.calls.Load())
	if n := d.pools.Replaced(); n > 0 {
		line += fmt.Sprintf(", %d hung replaced", n)
	}
	return line
}

// statusLoop keeps STATUS= current, within statusEvery.
func (d *daemon) statusLoop(ctx context.Context) {
	last := ""
	for {
		if line := d.statusLine(); line != last {
			notify("STATUS=" + line)
			last = line
			// At most one update per statusEvery: a busy daemon's calls
			// coalesce instead of waking this loop, and sending systemd
			// a datagram, once each.
			select {
			case <-ctx.Done():
				return
			case <-time.After(statusEvery):
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.statusPoke:
		case <-time.After(2 * time.Second):
		}
	}
}

// statusEvery is the shortest time between two STATUS= updates.
const statusEvery = 500 * time.Millisecond

// pokeStatus asks statusLoop to send STATUS= now (after a call).
func (d *daemon) pokeStatus() {
	select {
	case d.statusPoke <- struct{}{}:
	default:
	}
}

// watchdogLoop pings systemd's watchdog at half its interval when
// WATCHDOG_USEC is set for us.
func (d *daemon) watchdogLoop(ctx context.Context) {
	every := watchdogInterval()
	if every <= 0 {
		return
	}
	for {
		notify("WATCHDOG=1")
		select {
		case <-ctx.Done():
			return
		case <-time.After(every / 2):
		}
	}
}
