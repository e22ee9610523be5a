// Package daemon is the service process: it takes the inherited listener
// (systemd/launchd) or binds one, serves the HTTP API of DESIGN.md §6 over the
// unix socket, keeps the server registry and the schema cache, and exits when
// idle.
//
// A request flows: listener → peer credential check (peercred_*.go) → the
// route table (server.go) → one serveX handler per route (namespaces.go,
// search.go, call.go, resolve.go, status.go) → the registry (registry.go:
// config, expanded specs) → the schema cache (package cache) and the pools
// (package upstream).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/upstream"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// Options configure Run. Tests build them directly.
type Options struct {
	Key     config.DaemonKey
	Config  *config.Config
	Paths   config.Paths
	Manager string // "systemd", "launchd" or "direct"
	Self    string // absolute path of the mcpxd binary (this daemon)

	// Getenv is the daemon's own environment (nil: os.Getenv). The daemon
	// never expands server variables from it; it is used to discover the
	// config of other directories for /v1/resolve (with MCPX_* removed).
	Getenv config.Getenv
	// Log receives the daemon's log lines (nil: os.Stderr).
	Log io.Writer
	// Reload, when it receives, reloads the config (Main sends on SIGHUP).
	// Otherwise the config is reloaded when a request's config stamp
	// differs from the loaded one (reload.go).
	Reload <-chan struct{}
	// Ready, when set, is called once the daemon serves (the direct
	// manager's readiness pipe; systemd gets READY=1 from sd_notify).
	Ready func()
	// ShutdownGrace bounds how long calls in flight may finish on exit
	// (0: 10s).
	ShutdownGrace time.Duration
	// ReadTimeout bounds reading one request, headers and body (0: 30s);
	// IdleTimeout closes a keep-alive connection without a request (0:
	// 60s); MaxConns caps the connections served at once, more wait (0:
	// 512). See limits.go.
	ReadTimeout time.Duration
	IdleTimeout time.Duration
	MaxConns    int
	// SocketCheck is how often a directly started daemon checks that its
	// socket file is still its own (alive.go; 0: 2s).
	SocketCheck time.Duration
}

const (
	defaultShutdownGrace = 10 * time.Second
	// maxBody bounds every request body.
	maxBody = 4 << 20
	// gcEvery is how often the content-addressed store is collected.
	gcEvery = time.Hour
)

// daemon is one running service process. Its handlers are safe for
// concurrent use; the config may be swapped by a reload at any time, so each
// request takes one *state and uses it throughout.
type daemon struct {
	opts    Options
	log     *log.Logger
	getenv  config.Getenv
	store   *cache.Store
	schemas *cache.Schemas
	pools   *upstream.Pools
	auth    *auth.Manager
	env     *envFile
	socket  string
	started time.Time
	binary  string // version.BinaryID of opts.Self, taken at start

	state    atomic.Pointer[state]
	reloadMu sync.Mutex // one reload at a time; guards unreached*
	// unreached is a client stamp a reload of state unreachedAt did not
	// produce (see freshen).
	unreached   string
	unreachedAt *state

	// redactor's memo (redact.go): the redactor built for one state and
	// one captured environment map.
	redactMu    sync.Mutex
	redactState *state
	redactEnv   uintptr
	redactCur   config.Redactor

	idx   indexes   // decoded tool indexes per snapshot digest (index.go)
	specs specCache // built upstream specs (registry.go)

	calls      atomic.Int64
	inflight   atomic.Int64
	lastActive atomic.Int64 // unix nanoseconds of the last request start or end

	// The info file is checked now and then (infokeep.go); retired is set
	// once a successor serves the socket (handoff.go).
	infoChecked atomic.Int64
	infoMu      sync.Mutex
	retired     atomic.Bool

	flightMu sync.Mutex
	flights  map[config.ServerHash]*flight

	elicits pending // elicitations waiting for their caller (elicit.go)

	// quit asks Run to exit (shutdown route, idle exit); its reason is
	// logged.
	quit     chan string
	quitOnce sync.Once

	statusPoke chan struct{}
	trimPoke   chan struct{} // a request arrived (trimLoop)

	// Background fetches: bgCtx ends them on exit; none starts once
	// bgClosed is set.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgMu     sync.Mutex
	bgClosed bool

	tasks taskTable // tasks.go

	subStreams subscribeStreams // resource subscription streams (subscribe.go)

	// lns and unanswered let a stop answer every request it accepted
	// (drain.go).
	lns        listeners
	unanswered *unanswered

	// handOffAsked: the stop was asked for by a client of a newer build
	// installed at our path; hand the socket to it (handoff.go).
	handOffAsked atomic.Bool
}

// Run serves on ln until ctx is done or the daemon decides to exit (idle
// exit, POST /v1/shutdown). It closes ln. A clean exit returns nil.
func Run(ctx context.Context, ln net.Listener, opts Options) error {
	if opts.Config == nil {
		return errors.New("run daemon: no config")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = defaultShutdownGrace
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = defaultReadTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	if opts.SocketCheck <= 0 {
		opts.SocketCheck = 2 * time.Second
	}
	flags := log.LstdFlags
	if opts.Getenv("JOURNAL_STREAM") != "" {
		flags = 0 // the journal stamps every line itself
	}
	d := &daemon{
		opts:    opts,
		log:     log.New(io.Discard, "mcpx daemon: ", flags),
		getenv:  opts.Getenv,
		env:     &envFile{path: opts.Paths.EnvFile(opts.Key)},
		socket:  ln.Addr().String(),
		started: time.Now().UTC().Truncate(time.Second),
		binary:  version.BinaryID(opts.Self),
		flights: map[config.ServerHash]*flight{},
		quit:    make(chan string, 1),

		statusPoke: make(chan struct{}, 1),
		trimPoke:   make(chan struct{}, 1),
		unanswered: newUnanswered(),
	}
	alive, err := takeAlive(opts.Paths.Alive(opts.Key), opts.ShutdownGrace+5*time.Second)
	if err != nil {
		ln.Close()
		return fmt.Errorf("run daemon %s: %w", opts.Key, err)
	}
	defer alive.Close()
	d.log.SetOutput(&redactingWriter{w: opts.Log, d: d})
	d.bgCtx, d.bgCancel = context.WithCancel(context.Background())
	defer d.bgCancel()
	d.touch()
	d.state.Store(newState(opts.Config))

	store, err := cache.OpenStore(opts.Paths.CAS())
	if err != nil {
		ln.Close()
		return fmt.Errorf("run daemon %s: %w", opts.Key, err)
	}
	d.store = store
	d.schemas = cache.NewSchemas(store, opts.Paths.Schemas())
	// Every call and discovery request loads a snapshot: a watched refs
	// directory spares each of them the stat of its ref.
	if err := d.schemas.Watch(); err != nil {
		d.log.Printf("%v; checking schema refs on every request", err)
	}
	// The previous daemon for this key is gone (we hold the alive lock):
	// end whatever of its servers outlived it, and of those of a daemon
	// that handed its socket over and died before stopping its own.
	children := opts.Paths.Children(opts.Key)
	for _, reap := range []func(string) (int, error){upstream.ReapOrphans, upstream.ReapRetired} {
		if n, err := reap(children); err != nil {
			d.log.Printf("reap servers of a previous daemon: %v", err)
		} else if n > 0 {
			d.log.Printf("reaped %d server processes a previous daemon left", n)
		}
	}
	tokens, err := auth.OpenStore(opts.Getenv, opts.Paths.AuthDir(), d.log.Printf)
	if err != nil {
		d.log.Printf("%v; keeping tokens in files", err)
		tokens = &auth.FileStore{Dir: opts.Paths.AuthDir()}
	}
	d.auth = auth.New(auth.Options{Store: tokens, Logf: d.log.Printf})
	d.pools = upstream.New(upstream.Options{
		OnListChanged:     d.listChanged,
		OnProtocolChanged: d.protocolChanged,
		Logf:              d.log.Printf,
		Auth:              d.auth,
		ChildrenFile:      opts.Paths.Children(opts.Key),
	})

	srv := &http.Server{
		Handler:           d.handler(),
		ConnContext:       connContext,
		ConnState:         d.unanswered.connState,
		ReadHeaderTimeout: min(defaultReadHeaderTimeout, opts.ReadTimeout),
		ReadTimeout:       opts.ReadTimeout,
		IdleTimeout:       opts.IdleTimeout,
		ErrorLog:          d.log,
	}
	srv.RegisterOnShutdown(d.subStreams.close)
	ln = newLimitListener(ln, opts.MaxConns)
	// The listener already queues connections, so the info file can
	// announce the daemon just before the first Accept.
	if err := d.writeInfo(); err != nil {
		d.log.Printf("%v", err)
	}
	served := make(chan error, 1)
	go func() { served <- d.lns.serve(srv, ln) }()
	for _, w := range opts.Config.Warnings {
		d.log.Printf("config: %s", w)
	}
	d.log.Printf("serving %s on %s (manager %s, %d servers)", opts.Key, d.socket, opts.Manager, len(opts.Config.Servers))
	notify("READY=1\nSTATUS=" + d.statusLine())
	if opts.Ready != nil {
		opts.Ready()
	}

	loops, stopLoops := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	loopFns := []func(context.Context){d.watchConfig, d.idleLoop, d.statusLoop, d.watchdogLoop, d.gcLoop, d.trimLoop}
	if opts.Manager == "direct" {
		// Under systemd or launchd the service manager owns the socket.
		loopFns = append(loopFns, func(ctx context.Context) { d.keepSocket(ctx, srv) })
	}
	for _, loop := range loopFns {
		wg.Add(1)
		go func() { defer wg.Done(); loop(loops) }()
	}

	var runErr error
	handOver := false // a newer build asked: hand the socket to it (handoff.go)
	select {
	case <-ctx.Done():
		d.log.Printf("stopping: %v", context.Cause(ctx))
	case why := <-d.quit:
		d.log.Printf("stopping: %s", why)
		handOver = d.handOffAsked.Load()
	case err := <-served:
		runErr = fmt.Errorf("serve %s: %w", d.socket, err)
		d.log.Printf("stopping: %v", runErr)
	}
	handedOff := false
	if handOver {
		if err := d.handOff(alive); err != nil {
			d.log.Printf("hand the socket to the new build: %v; stopping without a successor", err)
		} else {
			handedOff = true
		}
	}
	drain := d.drainBound()
	if !handedOff { // the successor is the unit's main process now
		notify("STOPPING=1")
		// Under systemd, the stop may take as long as the calls in flight
		// may (and then the servers' stop): more than TimeoutStopSec.
		notify(fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", (drain + 3*opts.ShutdownGrace).Microseconds()))
	}
	stopLoops()

	// Stop accepting, answer what was already accepted and let each call
	// in flight finish within its own bound (drainBound); idle keep-alive
	// connections are closed (clients retry those). See drain.go for why
	// Shutdown comes last.
	grace, cancel := context.WithTimeout(context.Background(), drain)
	d.lns.close()
	d.unanswered.stopReading()
	if n := d.unanswered.wait(grace); n > 0 {
		d.log.Printf("stop serving: %d connections sent no request within %s", n, drain)
	}
	if err := srv.Shutdown(grace); err != nil {
		d.log.Printf("stop serving: %v; closing remaining connections", err)
		srv.Close()
	}
	cancel()
	wg.Wait()
	d.bgMu.Lock()
	d.bgClosed = true
	d.bgMu.Unlock()
	d.bgCancel()
	bgDone := make(chan struct{})
	go func() { d.bg.Wait(); close(bgDone) }()
	select {
	case <-bgDone:
	case <-time.After(opts.ShutdownGrace):
		d.log.Printf("background fetches did not end within %s", opts.ShutdownGrace)
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), opts.ShutdownGrace)
	if err := d.pools.Close(closeCtx); err != nil {
		d.log.Printf("stop servers: %v", err)
	} else if handedOff {
		os.Remove(d.pools.ChildrenFile()) // none left to reap
	}
	cancel()
	d.removeInfo()
	if opts.Manager == "direct" {
		removeDirectSocket(opts.Paths, opts.Key, d.socket)
	}
	d.log.Printf("stopped after %d calls", d.calls.Load())
	return runErr
}

// stop asks Run to exit; the first reason wins.
func (d *daemon) stop(why string) {
	d.quitOnce.Do(func() { d.quit <- why })
}

// touch records activity for the idle timer.
func (d *daemon) touch() { d.lastActive.Store(time.Now().UnixNano()) }

// live is the number of running server instances of the current config.
func (d *daemon) live() int {
	n := 0
	for _, h := range d.state.Load().hashes {
		n += d.pools.Live(h)
	}
	return n
}

// idleExit is the configured idle exit delay.
func (d *daemon) idleExit() time.Duration {
	if v := d.state.Load().cfg.Settings.IdleExit.D(); v > 0 {
		return v
	}
	return config.DefaultIdleExit
}

// idleLoop exits the daemon after idleExit with no request in flight, no
// request since, and no live server. A live server counts as activity.
func (d *daemon) idleLoop(ctx context.Context) {
	for {
		limit := d.idleExit()
		tick := min(max(limit/4, 10*time.Millisecond), 30*time.Second)
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
		if d.inflight.Load() > 0 || d.live() > 0 {
			d.touch()
			continue
		}
		if idle := time.Since(time.Unix(0, d.lastActive.Load())); idle >= limit {
			d.stop(fmt.Sprintf("idle for %s", idle.Round(time.Millisecond)))
			return
		}
	}
}

// gcLoop collects the content-addressed store at start and every hour
// (at most once an hour across processes).
func (d *daemon) gcLoop(ctx context.Context) {
	for {
		p := cache.PolicyFrom(d.state.Load().cfg.Settings.Cache)
		if rep, ran, err := d.store.GCEvery(p, gcEvery); err != nil {
			d.log.Printf("cache gc: %v", err)
		} else if ran && len(rep.Removed) > 0 {
			d.log.Printf("cache gc: removed %d entries, %d bytes", len(rep.Removed), rep.FreedBytes)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(gcEvery):
		}
	}
}
