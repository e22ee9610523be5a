package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
)

// Resource subscriptions, held with servers on behalf of the daemon's
// clients. Subscriptions of one server and scope key (the instances a
// caller may share) are kept by one watch, on one pinned instance: a
// pinned instance is not stopped for being idle, so updates keep coming
// while anyone is subscribed. Each URI is subscribed once however many
// clients want it, and released when the last of them goes:
//
//   - a 2025-11-25 server gets resources/subscribe for the first
//     subscriber of a URI and resources/unsubscribe after the last;
//   - a 2026-07-28 server gets the URIs in the resourceSubscriptions of the
//     connection's subscriptions/listen stream (listen.go), re-opened with
//     the new set whenever it changes.
//
// The server's notifications/resources/updated go to the subscribers of
// that URI (or of a URI it is below). When the instance goes away (it
// exited, was restarted, or was replaced because its definition or
// environment changed), the watch takes another and subscribes there
// again; subscribers notice nothing but the updates missed meanwhile.

// ErrNoSubscriptions is a server that does not offer resource
// subscriptions (no resources.subscribe capability), or did not establish
// the one asked for.
var ErrNoSubscriptions = errors.New("the server does not offer resource subscriptions")

// Subscriber is one client's wish for a resource's updates.
type Subscriber struct {
	// Spec is the server's definition as it is now. It is asked again
	// whenever the subscription is made anew; an error (the server left
	// the config or was redefined) ends the subscription with it.
	Spec   func() (Spec, error)
	Caller Caller
	URI    string
	// Updated is told the URI of each notifications/resources/updated
	// for URI or a resource below it. It must not block.
	Updated func(uri string)
	// Ended is told once when the subscription ends other than by Close:
	// the spec's error, the pools closing, or the server refusing the
	// subscription when it was made anew. It must not block. May be nil.
	Ended func(err error)
}

// Subscription is a subscription held for one client until Close.
type Subscription struct {
	w   *watch
	sub Subscriber
	// result carries the outcome of making the subscription (buffered,
	// written once); nil once it is held.
	result chan error
	held   bool // guarded by subscriptions.mu
	over   bool // removed from its watch (guarded by subscriptions.mu)
}

// subscriptions is a pool set's resource subscriptions.
type subscriptions struct {
	mu      sync.Mutex
	watches map[watchKey]*watch
}

type watchKey struct {
	hash  config.ServerHash
	scope string
}

// watch keeps the subscriptions of one server and scope key; its keeper
// goroutine (run) does everything that talks to the server, one thing at
// a time.
type watch struct {
	p      *Pools
	key    watchKey
	caller Caller
	spec   func() (Spec, error) // the newest subscriber's (guarded by subscriptions.mu)
	poke   chan struct{}        // something changed (buffered 1)
	after  <-chan struct{}
	ended  chan struct{} // closed when run returns

	// Guarded by subscriptions.mu.
	subs map[string][]*Subscription // by URI
	cn   *conn                      // where the subscriptions are held
	held map[string]bool            // URIs subscribed on cn
	done bool                       // run is ending: new subscribers make a new watch
}

// Subscribe subscribes to s.URI on an instance chosen by s.Caller's scope
// (starting one if needed) and returns once the server holds the
// subscription, or with why not: *StartError, *CooldownError, an
// *RPCError of the server's, ErrNoSubscriptions, ctx's error.
func (p *Pools) Subscribe(ctx context.Context, s Subscriber) (*Subscription, error) {
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	if spec.Server == nil {
		return nil, fmt.Errorf("subscribe %s: no server definition", spec.Hash)
	}
	l := p.effective(spec.Hash, limitsOf(spec.Server))
	key := watchKey{spec.Hash, scopeKey(l.scope, s.Caller)}
	sub := &Subscription{sub: s, result: make(chan error, 1)}

	t := &p.subs
	t.mu.Lock()
	if p.life.Err() != nil {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	if t.watches == nil {
		t.watches = map[watchKey]*watch{}
	}
	w := t.watches[key]
	if w == nil || w.done {
		nw := &watch{p: p, key: key, caller: s.Caller, spec: s.Spec, poke: make(chan struct{}, 1),
			ended: make(chan struct{}), subs: map[string][]*Subscription{}, held: map[string]bool{}}
		if w != nil {
			nw.after = w.ended // the old keeper releases first
		}
		w = nw
		t.watches[key] = w
		go w.run()
	}
	sub.w = w
	w.spec = s.Spec // the newest caller's view of the config
	w.subs[s.URI] = append(w.subs[s.URI], sub)
	if w.held[s.URI] {
		sub.held = true
		sub.result <- nil
	}
	t.mu.Unlock()
	w.kick()

	select {
	case err := <-sub.result:
		if err != nil {
			return nil, err
		}
		return sub, nil
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
}

// Close ends the subscription; the server is told once no other client
// wants the resource. Idempotent.
func (s *Subscription) Close() {
	w := s.w
	t := &w.p.subs
	t.mu.Lock()
	removed := w.remove(s)
	t.mu.Unlock()
	if removed {
		w.kick()
	}
}

// remove takes s out of w. Called with subscriptions.mu held.
func (w *watch) remove(s *Subscription) bool {
	if s.over {
		return false
	}
	s.over = true
	list := slices.DeleteFunc(w.subs[s.sub.URI], func(x *Subscription) bool { return x == s })
	if len(list) == 0 {
		delete(w.subs, s.sub.URI)
	} else {
		w.subs[s.sub.URI] = list
	}
	return true
}

func (w *watch) kick() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// fail ends the subscriptions to uri ("" for every URI) with err: those
// being made learn it from Subscribe, held ones from Ended.
func (w *watch) fail(uri string, err error) {
	t := &w.p.subs
	t.mu.Lock()
	var ended []*Subscription
	for u, list := range w.subs {
		if uri != "" && u != uri {
			continue
		}
		for _, s := range slices.Clone(list) {
			w.remove(s)
			if s.held {
				ended = append(ended, s)
			} else {
				s.result <- err
			}
		}
	}
	t.mu.Unlock()
	for _, s := range ended {
		if s.sub.Ended != nil {
			s.sub.Ended(err)
		}
	}
}

// failPending fails the subscriptions to uri that are not held yet (a
// subscription made anew after a restart stays, and is tried again).
func (w *watch) failPending(uri string, err error) {
	t := &w.p.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	for u, list := range w.subs {
		if uri != "" && u != uri {
			continue
		}
		for _, s := range slices.Clone(list) {
			if !s.held {
				w.remove(s)
				s.result <- err
			}
		}
	}
}

// established marks the subscriptions to uri held on cn.
func (w *watch) established(cn *conn, uri string) {
	t := &w.p.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.cn != cn {
		return
	}
	w.held[uri] = true
	for _, s := range w.subs[uri] {
		if !s.held {
			s.held = true
			s.result <- nil
		}
	}
}

// wanted is the URIs someone subscribes to, and those held on cn.
func (w *watch) wanted() (want []string, held map[string]bool) {
	t := &w.p.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	for u := range w.subs {
		want = append(want, u)
	}
	slices.Sort(want)
	return want, copySet(w.held)
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// subscribeBackoff bounds the wait before an instance is asked for again
// after a failed start.
var subscribeBackoff = [2]time.Duration{time.Second, 30 * time.Second}

// run is the keeper: it takes an instance, makes what is wanted held on
// it, and does it again on another instance when that one goes away,
// until nobody subscribes.
func (w *watch) run() {
	defer close(w.ended)
	if w.after != nil {
		<-w.after
	}
	p := w.p
	var in *instance
	var l limits
	defer func() {
		if in != nil {
			p.unpin(in, l)
		}
	}()
	wait := subscribeBackoff[0]
	for {
		t := &p.subs
		t.mu.Lock()
		if len(w.subs) == 0 {
			w.done = true
			if t.watches[w.key] == w {
				delete(t.watches, w.key)
			}
			cn, held := w.cn, copySet(w.held)
			t.mu.Unlock()
			if cn != nil && !isStopped(cn) && len(held) > 0 {
				w.release(cn, held)
			}
			return
		}
		cn, specOf := w.cn, w.spec
		t.mu.Unlock()

		if p.life.Err() != nil {
			w.fail("", ErrClosed)
			continue
		}
		if cn == nil || isStopped(cn) {
			if in != nil {
				p.unpin(in, l)
				in = nil
			}
			t.mu.Lock()
			w.cn, w.held = nil, map[string]bool{}
			t.mu.Unlock()
			spec, err := specOf()
			if err != nil {
				w.fail("", err)
				continue
			}
			var next *instance
			next, l, err = p.pin(p.life, spec, w.caller)
			if err != nil {
				if errors.Is(err, ErrClosed) {
					w.fail("", err)
					continue
				}
				w.failPending("", err)
				p.logf("upstream: %s: resource subscriptions wait for a server: %v", serverName(spec), err)
				if !w.sleep(wait) {
					continue
				}
				wait = min(2*wait, subscribeBackoff[1])
				continue
			}
			wait = subscribeBackoff[0]
			in, cn = next, next.conn
			t.mu.Lock()
			w.cn = cn
			t.mu.Unlock()
		}

		w.reconcile(cn, l)

		select {
		case <-w.poke:
		case <-cn.stopped:
		case <-p.life.Done():
		}
	}
}

// sleep waits d, or less when a subscriber comes or goes or the pools
// close; it reports whether d passed.
func (w *watch) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.poke:
		return false
	case <-w.p.life.Done():
		return false
	}
}

func isStopped(cn *conn) bool {
	select {
	case <-cn.stopped:
		return true
	default:
		return false
	}
}

// reconcile makes cn hold exactly the URIs wanted.
func (w *watch) reconcile(cn *conn, l limits) {
	want, held := w.wanted()
	if r := cn.caps.Resources; r == nil || !r.Subscribe {
		err := fmt.Errorf("%s: %w", cn.server, ErrNoSubscriptions)
		for _, u := range want {
			w.fail(u, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(w.p.life, l.call)
	defer cancel()
	if cn.modern {
		if len(want) == len(held) && !slices.ContainsFunc(want, func(u string) bool { return !held[u] }) {
			return
		}
		acked, err := cn.listenFor(ctx, want)
		if err != nil {
			if isStopped(cn) {
				return // taken again on another instance
			}
			for _, u := range want {
				if !held[u] {
					w.fail(u, fmt.Errorf("subscribe to %s on %s: %w", u, cn.server, err))
				}
			}
			return
		}
		t := &w.p.subs
		t.mu.Lock()
		if w.cn == cn {
			w.held = map[string]bool{}
		}
		t.mu.Unlock()
		for _, u := range want {
			if slices.Contains(acked, u) {
				w.established(cn, u)
			} else {
				w.fail(u, fmt.Errorf("subscribe to %s on %s: %w: it did not acknowledge it", u, cn.server, ErrNoSubscriptions))
			}
		}
		return
	}
	for _, u := range want {
		if held[u] {
			continue
		}
		_, err := cn.request(ctx, string(mcp.MethodResourcesSubscribe), map[string]string{"uri": u})
		var te *errTransport
		switch {
		case err == nil:
			w.established(cn, u)
		case errors.As(err, &te):
			w.p.drop(cn) // broken: the next instance gets the subscriptions
			return
		case isStopped(cn):
			return
		default:
			w.fail(u, fmt.Errorf("subscribe to %s on %s: %w", u, cn.server, err))
		}
	}
	var gone map[string]bool
	for u := range held {
		if !slices.Contains(want, u) {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[u] = true
		}
	}
	if len(gone) > 0 {
		w.release(cn, gone)
	}
}

// release tells the server nobody wants uris any more.
func (w *watch) release(cn *conn, uris map[string]bool) {
	ctx, cancel := context.WithTimeout(w.p.life, 10*time.Second)
	defer cancel()
	t := &w.p.subs
	if cn.modern {
		want, _ := w.wanted()
		if _, err := cn.listenFor(ctx, want); err != nil {
			w.p.logf("upstream: %s: end resource subscriptions: %v", cn.server, err)
		}
	} else {
		for u := range uris {
			if _, err := cn.request(ctx, string(mcp.MethodResourcesUnsubscribe), map[string]string{"uri": u}); err != nil {
				w.p.logf("upstream: %s: unsubscribe from %s: %v", cn.server, u, err)
			}
		}
	}
	t.mu.Lock()
	if w.cn == cn {
		for u := range uris {
			delete(w.held, u)
		}
	}
	t.mu.Unlock()
}

// updated routes a server's notifications/resources/updated to the
// subscribers of that URI (or of one it is below) held on cn.
func (p *Pools) updated(cn *conn, uri string) {
	t := &p.subs
	t.mu.Lock()
	var to []*Subscription
	for _, w := range t.watches {
		if w.cn != cn {
			continue
		}
		for u, list := range w.subs {
			if w.held[u] && (u == uri || below(uri, u)) {
				to = append(to, list...)
			}
		}
	}
	t.mu.Unlock()
	for _, s := range to {
		s.sub.Updated(uri)
	}
}

// below reports whether uri names a resource below base (the spec allows
// an update of a sub-resource of the one subscribed to).
func below(uri, base string) bool {
	if !strings.HasPrefix(uri, base) {
		return false
	}
	return strings.HasSuffix(base, "/") || strings.HasPrefix(uri[len(base):], "/")
}

// pin takes an instance for caller (starting one if needed) and keeps it
// from being stopped for idleness until unpin; it is free for calls
// meanwhile.
func (p *Pools) pin(ctx context.Context, spec Spec, caller Caller) (*instance, limits, error) {
	l := p.effective(spec.Hash, limitsOf(spec.Server))
	waitCtx, cancel := context.WithTimeout(ctx, l.call)
	defer cancel()
	in, err := p.acquire(ctx, waitCtx, spec, caller, l)
	if err != nil {
		return nil, l, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in.pins++
	in.busy--
	if pl := p.owner(in); pl != nil {
		p.broadcast(pl)
	}
	return in, l, nil
}

// unpin undoes pin: a free instance gets its idle timer, or stops when it
// was call-scoped or stale.
func (p *Pools) unpin(in *instance, l limits) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in.pins--
	if in.pins > 0 || in.busy > 0 || in.gone {
		return
	}
	pl := p.owner(in)
	switch {
	case pl == nil:
		in.gone = true
		p.stopAsync(in)
	case l.scope == config.ScopeCall || in.stale:
		p.remove(pl, in)
	default:
		gen := in.gen
		in.timer = time.AfterFunc(pl.idle, func() { p.reapIdle(in, gen) })
	}
}

// drop stops the instance of cn, whose connection broke.
func (p *Pools) drop(cn *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.pools {
		for _, in := range pl.insts {
			if in.conn == cn {
				p.logf("upstream: %s: the connection broke while subscribing; replacing the instance", pl.name)
				p.remove(pl, in)
				return
			}
		}
	}
}
