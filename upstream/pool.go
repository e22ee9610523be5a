package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// Spec is everything needed to start one server.
type Spec struct {
	// Server is the definition with variables already expanded and
	// Options effective.
	Server *config.Server
	// Hash is the ServerHash of the unexpanded definition (pool key).
	Hash config.ServerHash
	// Env is the full process environment for stdio servers (captured
	// caller environment; Server.Env is added on top by upstream). Nil
	// means empty: a server never inherits the daemon's own environment
	// (DESIGN §2), which under a service manager is not the user's.
	Env []string
	// EnvDigest identifies the expanded values; an instance started with
	// another digest is replaced.
	EnvDigest string
	// ProtocolVersion is the version that worked last time ("" = never
	// learned: the first start probes; see Listing.ProtocolVersion and
	// generation.go).
	ProtocolVersion string
	// Roots are offered to the server (roots/list); none means the roots
	// capability is not declared.
	Roots []Root
	// Launch, when set (WithLaunch), is the fingerprint of what an
	// instance is started with, computed once by whoever keeps the spec;
	// "" makes every call compute it.
	Launch string
}

// WithLaunch returns spec with its Launch fingerprint set. A caller that
// keeps a spec for many calls (the daemon caches them) sets it once:
// computing it encodes and hashes the definition, which was 4.6 % of the
// daemon's CPU in a profile of a call loop.
func (spec Spec) WithLaunch() Spec {
	spec.Launch = launchOf(spec)
	return spec
}

// Caller says which instance a call may use (scope), and whether the call
// may be sent twice.
type Caller struct {
	Session string // MCPX_SESSION_ID
	Cwd     string
	// Idempotent: running the request twice is harmless (a tool annotated
	// readOnlyHint or idempotentHint, a read), so it may be sent again to
	// a fresh instance after the server may have read it (exits.go).
	Idempotent bool
}

// Listing is what a server lists, raw.
type Listing struct {
	ProtocolVersion string
	ServerInfo      json.RawMessage
	Capabilities    json.RawMessage // as the server declared them
	Instructions    string
	Tools           []json.RawMessage
	Prompts         []json.RawMessage
	Resources       []json.RawMessage
	// ResourceTemplates is resources/templates/list (nil when the server
	// has no resources or does not know the method).
	ResourceTemplates []json.RawMessage
	// TTLMs and CacheScope are the caching hints of a 2026-07-28 server's
	// list results (the shortest ttlMs of them all; "private" if any list
	// said so); nil and "" when it gave none.
	TTLMs      *int64
	CacheScope string
}

// Options configure the pool set.
type Options struct {
	// OnListChanged is called when a server sends
	// notifications/{tools,prompts,resources}/list_changed. It runs on its
	// own goroutine, so it may call List.
	OnListChanged func(h config.ServerHash, kind string)
	// OnProtocolChanged is called when a start settles on a protocol
	// version of another generation than Spec.ProtocolVersion (the one
	// remembered for the server, when there was one), so the caller can
	// remember the new one. It runs on its own goroutine.
	OnProtocolChanged func(h config.ServerHash, version string)
	// Logf logs (may be nil).
	Logf func(format string, args ...any)
	// Auth keeps the OAuth tokens of remote servers (nil: no OAuth; a
	// server asking for a login fails with a transport error).
	Auth *auth.Manager
	// ChildrenFile, when set, is where the process groups of running stdio
	// servers are recorded, so that the next daemon can reap them if this
	// one dies (ReapOrphans).
	ChildrenFile string
}

// Pools is every pool of a daemon: one pool per ServerHash, each holding
// the running instances of that server. Safe for concurrent use.
type Pools struct {
	opts Options

	// Knobs, fields so tests can make them small.
	now          func() time.Time
	cooldownBase time.Duration // first cooldown, doubled per consecutive failure
	cooldownMax  time.Duration
	stopGrace    time.Duration // each wait of the stop sequence
	hangGrace    time.Duration // how long a server may take to answer after a cut-short call (exits.go)

	// life ends at Close, cutting starts in progress short.
	life    context.Context
	endLife context.CancelFunc

	// obs routes progress and log notifications to calls in flight, asks
	// a server's inquiries to the calls that answer them.
	obs  observers
	asks askers
	// subs are the resource subscriptions held for clients (subscribe.go).
	subs subscriptions

	childMu    sync.Mutex
	children   map[int]childRecord
	childMoved string // where the record moved (reap.go); "" for Options.ChildrenFile

	mu     sync.Mutex
	pools  map[config.ServerHash]*pool
	closed bool
	stops  sync.WaitGroup // instances being stopped in the background
	starts sync.WaitGroup // instances starting; Close waits for them too
}

// pool is the instances of one server definition. Guarded by Pools.mu.
type pool struct {
	hash  config.ServerHash
	name  string
	insts []*instance
	// changed is closed (and replaced) whenever an instance frees up, goes
	// away or finishes starting, waking callers queued for one.
	changed chan struct{}
	idle    time.Duration // idleTimeout in effect

	failures int // consecutive failed starts
	until    time.Time
	last     *StartError

	protocolVersion string // the version the last start settled on

	health poolHealth // exits.go
}

// instance is one running (or starting) server. Guarded by Pools.mu except
// conn, which is set once before ready is closed.
type instance struct {
	key    string // scope key
	launch string // fingerprint of what it was started with
	conn   *conn  // nil while starting
	ready  chan struct{}
	busy   int  // calls in flight (or 1 while its starter holds it)
	pins   int  // resource subscriptions held on it: not stopped when idle (subscribe.go)
	stale  bool // definition, env or restart moved on: stop when free
	gone   bool // removed from its pool
	timer  *time.Timer
	gen    int          // bumps on every use, so a late idle timer can tell
	life   instanceLife // exits.go
}

// New returns an empty pool set.
func New(opts Options) *Pools {
	life, endLife := context.WithCancel(context.Background())
	return &Pools{
		opts:         opts,
		life:         life,
		endLife:      endLife,
		now:          time.Now,
		cooldownBase: time.Second,
		cooldownMax:  30 * time.Second,
		stopGrace:    1500 * time.Millisecond,
		hangGrace:    2 * time.Second,
		pools:        map[config.ServerHash]*pool{},
	}
}

func (p *Pools) logf(format string, args ...any) {
	if p.opts.Logf != nil {
		p.opts.Logf(format, args...)
	}
}

// limits are a server's effective pool options, with defaults filled in.
type limits struct {
	exclusive bool
	scope     string
	max       int
	idle      time.Duration
	call      time.Duration
	start     time.Duration
}

func limitsOf(s *config.Server) limits {
	o := s.Options
	l := limits{
		exclusive: o.Sharing == config.SharingExclusive,
		scope:     o.Scope,
		max:       o.Max,
		idle:      o.IdleTimeout.D(),
		call:      o.CallTimeout.D(),
		start:     o.StartTimeout.D(),
	}
	if l.scope == "" {
		l.scope = config.ScopeGlobal
	}
	if l.idle <= 0 {
		l.idle = config.DefaultIdleTimeout
	}
	if l.call <= 0 {
		l.call = config.DefaultCallTimeout
	}
	if l.start <= 0 {
		l.start = config.DefaultStartTimeout
	}
	return l
}

// scopeKey says which instances a caller may share.
func scopeKey(scope string, c Caller) string {
	switch scope {
	case config.ScopeCwd:
		return "cwd:" + c.Cwd
	case config.ScopeSession:
		return "session:" + c.Session
	}
	return ""
}

// workDir is where a stdio server runs (DESIGN §2): its entry's cwd
// (absolute once expanded), else the caller's directory for scope cwd (one
// instance per directory, running in it), else the project directory of the
// file that defined it, else the HOME of its environment (the built-in
// server). Never the daemon's own working directory, which differs between
// service managers.
func workDir(spec Spec, l limits, c Caller) string {
	s := spec.Server
	switch {
	case s.Cwd != "":
		return s.Cwd
	case l.scope == config.ScopeCwd && c.Cwd != "":
		return c.Cwd
	case s.Dir != "":
		return s.Dir
	}
	for _, kv := range spec.Env {
		if home, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(home) {
			return home
		}
	}
	return ""
}

// launchOf fingerprints what an instance was started with, so a changed
// definition or environment replaces it. The caller-derived working
// directory is not part of it: the scope key already separates those.
func launchOf(spec Spec) string {
	s := spec.Server
	b, _ := json.Marshal(struct {
		Command   string
		Args      []string
		Env       map[string]string
		Cwd       string
		Dir       string
		URL       string
		Transport string
		Headers   map[string]string
		EnvDigest string
		Roots     []Root
	}{s.Command, s.Args, s.Env, s.Cwd, s.Dir, s.URL, s.Transport, s.Headers, spec.EnvDigest, spec.Roots})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Call calls tool with args (a JSON object) on an instance chosen by scope,
// starting one if needed, bounded by callTimeout; ctx cancellation reaches
// the server as notifications/cancelled. It returns the raw CallToolResult.
func (p *Pools) Call(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage) (json.RawMessage, error) {
	return p.CallWith(ctx, spec, caller, tool, args, Hooks{})
}

// CallWith is Call with hooks: h.Observe hears the call's progress and the
// log lines of its connection (see CallObserved), h.Answer answers what the
// server asks meanwhile (elicitation, sampling; the time it takes does not
// count against callTimeout).
func (p *Pools) CallWith(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage, h Hooks) (json.RawMessage, error) {
	if h.Observe == nil {
		return p.callTool(ctx, spec, caller, tool, args, "", h)
	}
	token, done := p.obs.add(h.Observe)
	defer done()
	return p.callTool(ctx, spec, caller, tool, args, token, h)
}

// callTool sends tools/call; a token (from observers.add) goes in the
// request's _meta as its progressToken, and the call hears the log lines
// of the connection it runs on.
func (p *Pools) callTool(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage, token string, h Hooks) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var out json.RawMessage
	err := p.with(ctx, spec, caller, tool, func(ctx context.Context, cn *conn) error {
		if token != "" {
			defer p.obs.listen(cn, token)()
		}
		ask := &asker{answer: h.Answer, ctx: ctx}
		defer p.asks.add(cn, ask)()
		ctx = context.WithValue(ctx, askerKey{}, ask)
		var err error
		ro := roundOpts{askRoots: h.Offer != nil && h.Offer.Roots, together: h.Offer != nil}
		out, err = cn.rounds(ctx, h.Answer, ro, func(extra map[string]json.RawMessage) (json.RawMessage, error) {
			return cn.callTool(ctx, tool, args, token, h, extra)
		})
		return err
	})
	return out, err
}

// Request sends one JSON-RPC request (resources/read, prompts/get, tasks/…)
// to an instance chosen by scope, starting one if needed, bounded like a
// call; what names it in errors. It returns the raw result.
func (p *Pools) Request(ctx context.Context, spec Spec, caller Caller, what, method string, params any) (json.RawMessage, error) {
	return p.RequestWith(ctx, spec, caller, what, method, params, Hooks{})
}

// RequestWith is Request whose server's inquiries (a 2026-07-28
// prompts/get or resources/read asking for input, a 2025-11-25 server's
// elicitation meanwhile) go to h.Answer (nil: declined); h.Offer, as for
// a call, is what a 2026-07-28 server is told the client offers. Only
// Answer and Offer of h are used.
func (p *Pools) RequestWith(ctx context.Context, spec Spec, caller Caller, what, method string, params any, h Hooks) (json.RawMessage, error) {
	var out json.RawMessage
	a := h.Answer
	err := p.with(ctx, spec, caller, what, func(ctx context.Context, cn *conn) error {
		ask := &asker{answer: a, ctx: ctx}
		defer p.asks.add(cn, ask)()
		ctx = context.WithValue(ctx, askerKey{}, ask)
		var err error
		ro := roundOpts{askRoots: h.Offer != nil && h.Offer.Roots, together: h.Offer != nil}
		out, err = cn.rounds(ctx, a, ro, func(extra map[string]json.RawMessage) (json.RawMessage, error) {
			if len(extra) == 0 {
				return cn.requestOffering(ctx, method, params, h.Offer)
			}
			b, err := json.Marshal(params)
			if err != nil {
				return nil, err
			}
			again, err := mergeFields(b, extra)
			if err != nil {
				return nil, err
			}
			return cn.requestOffering(ctx, method, again, h.Offer)
		})
		return err
	})
	return out, err
}

// List fetches tools/list (all pages), prompts/list and resources/list
// (when the server has them) as raw JSON, through a pooled instance.
func (p *Pools) List(ctx context.Context, spec Spec, caller Caller) (*Listing, error) {
	var l *Listing
	caller.Idempotent = true // a list changes nothing
	err := p.with(ctx, spec, caller, "tools/list", func(ctx context.Context, cn *conn) error {
		var hints cacheHints
		tools, err := cn.listAll(ctx, string(mcp.MethodToolsList), "tools", &hints)
		if err != nil {
			return err
		}
		l = &Listing{
			ProtocolVersion: cn.protocolVersion,
			ServerInfo:      cn.serverInfo,
			Instructions:    cn.instructions,
			Tools:           tools,
		}
		if caps, err := json.Marshal(cn.caps); err == nil {
			l.Capabilities = caps
		}
		defer func() { l.TTLMs, l.CacheScope = hints.ttl, hints.scope }()
		if cn.caps.Prompts != nil {
			if l.Prompts, err = cn.listAll(ctx, string(mcp.MethodPromptsList), "prompts", &hints); err != nil {
				return err
			}
		}
		if cn.caps.Resources != nil {
			if l.Resources, err = cn.listAll(ctx, string(mcp.MethodResourcesList), "resources", &hints); err != nil {
				return err
			}
			// Templates are optional within the capability: a server
			// that does not know the method simply has none.
			l.ResourceTemplates, err = cn.listAll(ctx, string(mcp.MethodResourcesTemplatesList), "resourceTemplates", &hints)
			var re *RPCError
			if errors.As(err, &re) && re.Code == mcp.METHOD_NOT_FOUND {
				l.ResourceTemplates, err = nil, nil
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return l, err
}

// with runs fn on an instance for caller, bounded by callTimeout (queueing
// and starting included), and turns
// what went wrong into the package's error types.
func (p *Pools) with(ctx context.Context, spec Spec, caller Caller, what string, fn func(context.Context, *conn) error) error {
	if spec.Server == nil {
		return fmt.Errorf("call %s: no server definition", spec.Hash)
	}
	name := serverName(spec)
	l := limitsOf(spec.Server)
	timeout := func() error { return &TimeoutError{Server: name, Tool: what, Timeout: l.call} }

	// One budget for the whole call: queueing for a free instance, a start
	// and the call itself all count against callTimeout.
	deadline := time.Now().Add(l.call)
	for resent := 0; ; {
		l := p.effective(spec.Hash, l)
		waitCtx, cancel := context.WithDeadline(ctx, deadline)
		inst, err := p.acquire(ctx, waitCtx, spec, caller, l)
		queued := waitCtx.Err()
		cancel()
		if err != nil {
			var se *StartError
			if ctx.Err() == nil && queued != nil && !errors.As(err, &se) && errors.Is(err, context.DeadlineExceeded) {
				return timeout()
			}
			return err
		}

		callCtx, cancel := withBudget(ctx, deadline)
		err = fn(callCtx, inst.conn)
		cut := callCtx.Err() // before cancel: did the deadline end it?
		cancel()
		var te *errTransport
		var scope *auth.InsufficientScopeError
		switch {
		case err == nil:
			p.release(inst, l, false)
			return nil
		case errors.As(err, &scope):
			// A request refused for want of scope was answered: the
			// connection is as good as before.
			p.release(inst, l, false)
			return scope
		case errors.As(err, &te):
			resend, why := p.afterBroken(spec.Hash, inst, l, te, caller, what)
			if resend && resent < maxResends && cut == nil {
				resent++
				p.logf("upstream: %s went away while %s was out; sending it again to a fresh instance", name, what)
				continue
			}
			var login *auth.LoginRequiredError
			if errors.As(err, &login) {
				return login
			}
			var tl *MessageTooLargeError
			if errors.As(te.err, &tl) {
				return tl
			}
			return &ExitError{Server: name, Err: te.err, Stderr: inst.conn.stderrTail(), NotResent: why}
		case ctx.Err() != nil:
			p.probeAfterCancel(inst, l)
			return fmt.Errorf("%s on %s: %w", what, name, ctx.Err())
		case cut != nil:
			p.probeAfterCancel(inst, l)
			return timeout()
		}
		p.release(inst, l, false)
		return fmt.Errorf("%s on %s: %w", what, name, err)
	}
}

// acquire finds or starts an instance for caller and marks it busy. waitCtx
// bounds queueing; ctx (without the call deadline) bounds a start together
// with startTimeout.
func (p *Pools) acquire(ctx, waitCtx context.Context, spec Spec, caller Caller, l limits) (*instance, error) {
	key := scopeKey(l.scope, caller)
	dir := workDir(spec, l, caller)
	launch := spec.Launch
	if launch == "" {
		launch = launchOf(spec)
	}
	var patience probePatience // exits.go
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		pl := p.poolFor(spec, l)
		p.retireStale(pl, launch)

		var wait <-chan struct{}
		probing := false
		if l.scope != config.ScopeCall {
			var in *instance
			if in, wait, probing = pl.take(key, l); in != nil {
				p.mu.Unlock()
				return in, nil
			}
		}
		if wait == nil && probing {
			wait = patience.wait(pl)
		}
		if wait == nil {
			if l.max > 0 && len(pl.insts) >= l.max {
				p.evictIdle(pl)
			}
			if l.max <= 0 || len(pl.insts) < l.max {
				if now := p.now(); now.Before(pl.until) {
					err := &CooldownError{Server: pl.name, Until: pl.until, Last: pl.last}
					p.mu.Unlock()
					return nil, err
				}
				in := &instance{key: key, launch: launch, ready: make(chan struct{}), busy: 1}
				pl.insts = append(pl.insts, in)
				p.starts.Add(1)
				pv := pl.protocolVersion
				p.mu.Unlock()
				return p.start(ctx, pl, in, spec, dir, l, pv)
			}
			wait = pl.changed
		}
		p.mu.Unlock()
		select {
		case <-wait:
		case <-patience.expired():
			patience.over = true
		case <-waitCtx.Done():
			return nil, waitCtx.Err()
		}
	}
}

// take looks among pl's live instances of scope key for one the caller may
// use now and returns it marked busy; else wait is closed when one being
// started is ready (nil when none may be waited for), and probing says
// whether one is being probed (it may be hung). Called with p.mu held.
func (pl *pool) take(key string, l limits) (in *instance, wait <-chan struct{}, probing bool) {
	for _, in := range pl.insts {
		if in.key != key || in.stale {
			continue
		}
		if in.life.probing { // it may be hung
			probing = true
			continue
		}
		if in.conn == nil { // starting
			if !l.exclusive {
				return nil, in.ready, probing
			}
			continue
		}
		if !l.exclusive || in.busy == 0 {
			in.busy++
			in.gen++
			if in.timer != nil {
				in.timer.Stop()
			}
			return in, nil, probing
		}
	}
	return nil, nil, probing
}

// poolFor returns h's pool, creating it. Called with p.mu held.
func (p *Pools) poolFor(spec Spec, l limits) *pool {
	pl := p.pools[spec.Hash]
	if pl == nil {
		pl = &pool{hash: spec.Hash, changed: make(chan struct{})}
		p.pools[spec.Hash] = pl
	}
	pl.name = serverName(spec)
	pl.idle = l.idle
	return pl
}

// retireStale marks instances started with another launch fingerprint and
// stops those that are free. Called with p.mu held.
func (p *Pools) retireStale(pl *pool, launch string) {
	for _, in := range slices.Clone(pl.insts) {
		if in.launch == launch || in.stale {
			continue
		}
		in.stale = true
		if in.conn != nil && in.busy == 0 {
			p.remove(pl, in)
		}
	}
}

// evictIdle stops the least recently used free instance to make room for
// another scope key. Called with p.mu held.
func (p *Pools) evictIdle(pl *pool) {
	for _, in := range pl.insts { // oldest first
		if in.conn != nil && in.busy == 0 {
			p.remove(pl, in)
			return
		}
	}
}

// start runs the start of in (reserved by the caller), records the outcome
// for cooldown and returns the instance busy for the caller.
func (p *Pools) start(ctx context.Context, pl *pool, in *instance, spec Spec, dir string, l limits, pv string) (*instance, error) {
	if pv == "" {
		pv = spec.ProtocolVersion
	}
	hash := spec.Hash
	startCtx, cancel := context.WithTimeout(ctx, l.start)
	unhook := context.AfterFunc(p.life, cancel) // Close ends the start
	cn, tail, err := dial(startCtx, dialParams{
		spec:            spec,
		dir:             dir,
		protocolVersion: pv,
		callTimeout:     l.call,
		startTimeout:    l.start,
		onNotification:  p.notificationHandler(hash),
		inquire:         p.inquire,
		auth:            p.opts.Auth,
		onSpawn: func(pid int) func() {
			p.noteChild(pid, true)
			return func() { p.noteChild(pid, false) }
		},
	}, p.stopGrace)
	unhook()
	cancel()

	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.starts.Done() // after any stop below is registered
	if err != nil {
		p.remove(pl, in)
		close(in.ready)
		if p.closed {
			return nil, ErrClosed
		}
		if ctx.Err() != nil { // the caller gave up; not the server's fault
			return nil, fmt.Errorf("start server %s: %w", pl.name, ctx.Err())
		}
		var login *auth.LoginRequiredError
		if errors.As(err, &login) { // no cooldown: a login fixes it at once
			return nil, login
		}
		var scope *auth.InsufficientScopeError
		if errors.As(err, &scope) { // likewise
			return nil, scope
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (startTimeout %s)", err, l.start)
		}
		se := &StartError{Server: pl.name, Err: err, Stderr: tail}
		pl.failures++
		d := p.cooldownBase << (pl.failures - 1)
		if d > p.cooldownMax || d <= 0 {
			d = p.cooldownMax
		}
		pl.until = p.now().Add(d)
		pl.last = se
		p.logf("upstream: %v; cooling down %s", se, d)
		return nil, se
	}
	in.conn = cn
	close(in.ready)
	pl.failures, pl.until, pl.last = 0, time.Time{}, nil
	pl.protocolVersion = cn.protocolVersion
	if cb := p.opts.OnProtocolChanged; cb != nil && spec.ProtocolVersion != "" &&
		mcp.IsModernProtocol(spec.ProtocolVersion) != cn.modern {
		go cb(hash, cn.protocolVersion)
	}
	p.broadcast(pl)
	if p.closed || in.gone {
		in.gone = true
		p.stopAsync(in)
		return nil, ErrClosed
	}
	p.logf("upstream: started %s (%s, protocol %s)", pl.name, spec.Server.Transport, cn.protocolVersion)
	if lost := cn.lost(); lost != nil {
		go func() {
			select {
			case <-lost:
				if cn.answers() { // it closed its stderr, it did not exit
					return
				}
				// An answer it wrote just before exiting may still be in
				// the pipe: let it reach its caller first.
				cn.drained(2 * time.Second)
				cn.awaitExit(time.Second)
				p.mu.Lock()
				if !in.gone {
					p.logf("upstream: %s exited", pl.name)
					p.remove(pl, in)
					p.judgeExit(pl, in)
				}
				p.mu.Unlock()
			case <-cn.stopped:
			}
		}()
	}
	return in, nil
}

// release returns in after a call. A broken connection is dropped; a
// call-scoped or stale instance is stopped; otherwise a free instance gets
// its idle timer.
func (p *Pools) release(in *instance, l limits, broken bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in.busy--
	pl := p.owner(in)
	switch {
	case in.gone:
		return
	case pl == nil:
		in.gone = true
		p.stopAsync(in)
		return
	case broken || l.scope == config.ScopeCall || (in.stale && in.busy == 0):
		p.remove(pl, in)
		return
	case in.busy == 0 && in.pins == 0:
		gen := in.gen
		in.timer = time.AfterFunc(pl.idle, func() { p.reapIdle(in, gen) })
	}
	p.broadcast(pl)
}

// reapIdle stops in if it has stayed unused since generation gen.
func (p *Pools) reapIdle(in *instance, gen int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.gone || in.busy > 0 || in.pins > 0 || in.gen != gen {
		return
	}
	if pl := p.owner(in); pl != nil {
		p.logf("upstream: %s idle, stopping", pl.name)
		p.remove(pl, in)
	}
}

// owner finds the pool holding in. Called with p.mu held.
func (p *Pools) owner(in *instance) *pool {
	for _, pl := range p.pools {
		if slices.Contains(pl.insts, in) {
			return pl
		}
	}
	return nil
}

// remove takes in out of pl and stops it in the background when it is
// running (a starting instance is stopped by its starter). Called with p.mu
// held.
func (p *Pools) remove(pl *pool, in *instance) {
	if i := slices.Index(pl.insts, in); i >= 0 {
		pl.insts = slices.Delete(pl.insts, i, i+1)
	}
	in.gone = true
	if in.timer != nil {
		in.timer.Stop()
	}
	if in.conn != nil {
		in.noteRemoved()
		p.stopAsync(in)
	}
	p.broadcast(pl)
}

func (p *Pools) stopAsync(in *instance) {
	p.stops.Add(1)
	go func() {
		defer p.stops.Done()
		in.conn.stop(p.stopGrace)
	}()
}

func (p *Pools) broadcast(pl *pool) {
	close(pl.changed)
	pl.changed = make(chan struct{})
}

// notificationHandler routes the notifications of server h's connections:
// progress and log lines to the calls watching them, list_changed to
// OnListChanged, resources/updated to the resource's subscribers.
func (p *Pools) notificationHandler(h config.ServerHash) func(*conn, mcp.JSONRPCNotification) {
	return func(cn *conn, n mcp.JSONRPCNotification) {
		if p.obs.deliver(cn, n) {
			return
		}
		var kind string
		switch n.Method {
		case string(mcp.MethodNotificationToolsListChanged):
			kind = "tools"
		case string(mcp.MethodNotificationPromptsListChanged):
			kind = "prompts"
		case string(mcp.MethodNotificationResourcesListChanged):
			kind = "resources"
		case mcp.MethodNotificationResourceUpdated:
			if uri, _ := n.Params.AdditionalFields["uri"].(string); uri != "" {
				p.updated(cn, uri)
			}
			return
		default:
			return
		}
		if cb := p.opts.OnListChanged; cb != nil {
			// Off the transport's read loop: the callback may call List.
			go cb(h, kind)
		}
	}
}

// Live is the number of running instances for h.
func (p *Pools) Live(h config.ServerHash) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	if pl := p.pools[h]; pl != nil {
		for _, in := range pl.insts {
			if in.conn != nil {
				n++
			}
		}
	}
	return n
}

// Restart stops h's instances (all when h is ""); returns how many. Free
// instances stop now; busy ones stop when their calls finish. It waits for
// the stops until ctx ends.
func (p *Pools) Restart(ctx context.Context, h config.ServerHash) int {
	p.mu.Lock()
	n := 0
	for hash, pl := range p.pools {
		if h != "" && hash != h {
			continue
		}
		for _, in := range slices.Clone(pl.insts) {
			if in.conn == nil {
				in.stale = true
				continue
			}
			n++
			if in.busy == 0 {
				p.remove(pl, in)
			} else {
				in.stale = true
			}
		}
		// A restart is a fresh chance: forget the cooldown, and that the
		// server exits after each answer.
		pl.failures, pl.until, pl.last = 0, time.Time{}, nil
		pl.health.oneShot = false
	}
	p.mu.Unlock()
	p.waitStops(ctx)
	return n
}

// Retain stops and forgets every pool whose hash is not in keep.
func (p *Pools) Retain(ctx context.Context, keep map[config.ServerHash]bool) {
	p.mu.Lock()
	for hash, pl := range p.pools {
		if keep[hash] {
			continue
		}
		for _, in := range slices.Clone(pl.insts) {
			if in.conn != nil && in.busy == 0 {
				p.remove(pl, in)
			} else {
				in.stale = true
			}
		}
		delete(p.pools, hash) // busy instances stop on release
		p.broadcast(pl)       // callers queued on it move to a new pool
	}
	p.mu.Unlock()
	p.waitStops(ctx)
}

// Close stops everything (stdin close → SIGTERM → SIGKILL on the group),
// starts and calls in flight included, and waits for the processes to be
// gone or ctx to end. Later Calls fail with ErrClosed.
func (p *Pools) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.endLife()
	for hash, pl := range p.pools {
		for _, in := range slices.Clone(pl.insts) {
			if in.conn != nil {
				p.remove(pl, in)
			} else {
				in.gone = true // its starter stops it
			}
		}
		delete(p.pools, hash)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		p.starts.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("stop upstream servers: %w", ctx.Err())
	}
	return p.waitStops(ctx)
}

// waitStops waits for background stops to finish, or ctx.
func (p *Pools) waitStops(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.stops.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop upstream servers: %w", ctx.Err())
	}
}
