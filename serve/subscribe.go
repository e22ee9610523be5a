package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Resource subscriptions relayed for hosts. The daemon holds each one
// with the server (POST /v1/subscribe, once per resource however many
// hosts want it); serve keeps one daemon subscription per host
// subscription and hands each update to that host, under the URI the host
// knows (mcpx://NS/URI at the aggregate, the server's own at a
// namespace's front):
//
//   - a 2025-11-25 session subscribes with resources/subscribe and leaves
//     with resources/unsubscribe; updates come as
//     notifications/resources/updated on its session, and its
//     subscriptions end with it;
//   - a 2026-07-28 host names the URIs in the resourceSubscriptions of its
//     subscriptions/listen stream; those the servers hold are the ones the
//     stream's acknowledgement names, updates come on that stream, and its
//     subscriptions end with it.
//
// mcp-go answers resources/subscribe itself (an empty result) and tells
// nobody but hooks; so the subscription is made in the hook that sees each
// request first (OnRequestInitialization), whose error is the host's
// answer (-32600, with the reason). A daemon subscription that ends under
// a host (the daemon stopped or was replaced, the server was redefined) is
// made again, backing off, for as long as the host holds it.

// hostSubs are a front's host subscriptions.
type hostSubs struct {
	mu sync.Mutex
	// bySession: a 2025-11-25 session's subscriptions, by the URI the host
	// subscribed to.
	bySession map[string]map[string]*hostSub
	all       map[*hostSub]bool // every subscription, listen streams' too
	closed    bool
}

// hostSub is one host subscription: the daemon subscription that serves
// it, kept (and made again) until cancel.
type hostSub struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// subscribes reports whether serve can relay subscriptions for a server
// whose snapshot is snap: when the server offers them, or when that is
// not known yet (never read), where the daemon's answer tells the host.
func subscribes(snap *cache.Snapshot) bool {
	if snap == nil || len(snap.Capabilities) == 0 {
		return true
	}
	var caps struct {
		Resources *struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
	}
	return json.Unmarshal(snap.Capabilities, &caps) == nil && caps.Resources != nil && caps.Resources.Subscribe
}

// canSubscribe reports whether the front for ns ("" the aggregate: any of
// them) can relay subscriptions, from cat.
func canSubscribe(cat *catalog, ns string) bool {
	if ns != "" {
		return subscribes(cat.snapshotOf(ns))
	}
	for _, n := range cat.served {
		if subscribes(cat.snapshotOf(n)) {
			return true
		}
	}
	return false
}

// subscribeHooks are the hooks of a front that relays subscriptions.
func (f *front) subscribeHooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddOnRequestInitialization(f.subscribeRequest)
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { f.subs.endSession(cs.SessionID()) })
	h.AddBeforeSubscriptionsListen(f.listen)
	return h
}

// target is the namespace and the server's URI of a URI a host names.
func (f *front) target(hostURI string) (ns, uri string, err error) {
	if f.ns != "" {
		return f.ns, hostURI, nil
	}
	ns, uri, ok := splitResourceURI(hostURI)
	if !ok {
		return "", "", fmt.Errorf("%q is not a resource mcpx serves (they look like mcpx://NS/URI)", hostURI)
	}
	return ns, uri, nil
}

// hostURI is the URI the host knows for uri of ns.
func (f *front) hostURI(ns, uri string) string {
	if f.ns != "" {
		return uri
	}
	return resourceURI(ns, uri)
}

// subscribeRequest handles a 2025-11-25 session's resources/subscribe and
// resources/unsubscribe before mcp-go answers them; anything else passes.
func (f *front) subscribeRequest(ctx context.Context, _ any, message any) error {
	raw, _ := message.(json.RawMessage)
	if !bytes.Contains(raw, []byte(`"resources/`)) || !bytes.Contains(raw, []byte(`subscribe"`)) {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Params.URI == "" {
		return nil // mcp-go says what is wrong with it
	}
	if v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string); mcp.IsModernProtocol(v) {
		return nil // removed in 2026-07-28: mcp-go refuses it
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return nil
	}
	switch m.Method {
	case string(mcp.MethodResourcesSubscribe):
		return f.subscribeSession(ctx, cs.SessionID(), m.Params.URI)
	case string(mcp.MethodResourcesUnsubscribe):
		f.subs.unsubscribe(cs.SessionID(), m.Params.URI)
	}
	return nil
}

// subscribeSession subscribes session to hostURI (once: again is a no-op).
func (f *front) subscribeSession(ctx context.Context, session, hostURI string) error {
	if f.subs.has(session, hostURI) {
		return nil
	}
	ns, uri, err := f.target(hostURI)
	if err != nil {
		return err
	}
	hs, err := f.relaySubscription(ctx, ns, uri, func(life context.Context, uri string) {
		f.s.posts.quiet(life, session, 5*time.Second) // over HTTP: on the GET stream (sessionPosts)
		err := f.mcp.SendNotificationToSpecificClient(session, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": f.hostURI(ns, uri)})
		if errors.Is(err, server.ErrSessionNotFound) {
			go f.subs.endSession(session) // it ended before its subscription was recorded
		}
	})
	if err != nil {
		return err
	}
	if !f.subs.add(session, hostURI, hs) {
		hs.end() // subscribed twice at once, or the session ended meanwhile
	}
	return nil
}

// listen subscribes a 2026-07-28 host's subscriptions/listen stream to
// the resources it names, and leaves in its resourceSubscriptions those
// the servers hold, which mcp-go acknowledges. The subscriptions end with
// the stream.
func (f *front) listen(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
	want := req.Params.Notifications.ResourceSubscriptions
	cs := server.ClientSessionFromContext(ctx)
	if len(want) == 0 || cs == nil {
		return
	}
	var held []string
	var subs []*hostSub
	for _, hostURI := range want {
		ns, uri, err := f.target(hostURI)
		if err == nil {
			var hs *hostSub
			hs, err = f.relaySubscription(ctx, ns, uri, func(life context.Context, uri string) {
				n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
					Method: mcp.MethodNotificationResourceUpdated,
					Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": f.hostURI(ns, uri)}},
				}}
				select {
				case cs.NotificationChannel() <- n:
				case <-life.Done():
				}
			})
			if err == nil {
				held = append(held, hostURI)
				subs = append(subs, hs)
				f.subs.track(hs)
				continue
			}
		}
		f.s.opts.Log.Printf("subscriptions/listen: %s is not subscribed: %v", hostURI, err)
	}
	req.Params.Notifications.ResourceSubscriptions = held
	context.AfterFunc(ctx, func() {
		for _, hs := range subs {
			hs.end()
		}
	})
}

// relaySubscription makes the daemon subscription for ns's uri (bounded
// by ctx) and keeps it, made again when it ends under the host, until the
// returned hostSub ends; updated is told each update, with a context that
// ends with the hostSub.
func (f *front) relaySubscription(ctx context.Context, ns, uri string, updated func(life context.Context, uri string)) (*hostSub, error) {
	req := api.SubscribeRequest{Namespace: ns, URI: uri, Session: sessionOf(ctx), Cwd: f.s.opts.Dir}
	sub, err := f.s.client().Subscribe(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s on %s: %w", uri, ns, err)
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	hs := &hostSub{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(hs.done)
		for sub != nil {
			stop := context.AfterFunc(life, sub.Close)
			var err error
			for err == nil {
				var u string
				if u, err = sub.Next(); err == nil {
					updated(life, u)
				}
			}
			stop()
			sub.Close()
			if life.Err() != nil {
				return
			}
			f.s.opts.Log.Printf("subscription to %s on %s ended: %v", uri, ns, err)
			if !lasting(err) {
				return
			}
			sub = f.resubscribe(life, req)
		}
	}()
	return hs, nil
}

// resubscribe makes req's subscription again, backing off, until it is
// made (nil when life ends first, or the daemon refuses it for good).
func (f *front) resubscribe(life context.Context, req api.SubscribeRequest) *client.Subscription {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		t := time.NewTimer(wait)
		select {
		case <-life.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		sub, err := f.s.client().Subscribe(life, req)
		if err == nil {
			return sub
		}
		if life.Err() != nil {
			return nil
		}
		if !lasting(err) {
			f.s.opts.Log.Printf("subscription to %s on %s: %v", req.URI, req.Namespace, err)
			return nil
		}
	}
}

// lasting reports whether a subscription that ended with err is worth
// making again: the daemon stopped or went away, the server was
// redefined, failed to start or broke; not when the namespace is gone or
// the server refuses.
func lasting(err error) bool {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return true // the connection to the daemon
	}
	switch ae.Code() {
	case api.CodeUnknownNamespace, api.CodeNoSubscriptions, api.CodeServerError, api.CodeUntrusted, api.CodeBadRequest:
		return false
	}
	return true
}

// end ends hs and waits for it.
func (hs *hostSub) end() {
	hs.cancel()
	<-hs.done
}

func (t *hostSubs) has(session, hostURI string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bySession[session][hostURI] != nil
}

// add records session's subscription; false when it has one already or
// subscriptions are over.
func (t *hostSubs) add(session, hostURI string, hs *hostSub) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.bySession[session][hostURI] != nil {
		return false
	}
	if t.bySession == nil {
		t.bySession = map[string]map[string]*hostSub{}
	}
	if t.bySession[session] == nil {
		t.bySession[session] = map[string]*hostSub{}
	}
	t.bySession[session][hostURI] = hs
	t.trackLocked(hs)
	return true
}

// track records a listen stream's subscription, so that closeAll ends it.
func (t *hostSubs) track(hs *hostSub) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		go hs.end()
		return
	}
	t.trackLocked(hs)
}

func (t *hostSubs) trackLocked(hs *hostSub) {
	if t.all == nil {
		t.all = map[*hostSub]bool{}
	}
	t.all[hs] = true
	go func() {
		<-hs.done
		t.mu.Lock()
		delete(t.all, hs)
		t.mu.Unlock()
	}()
}

func (t *hostSubs) unsubscribe(session, hostURI string) {
	t.mu.Lock()
	hs := t.bySession[session][hostURI]
	delete(t.bySession[session], hostURI)
	t.mu.Unlock()
	if hs != nil {
		hs.end()
	}
}

// endSession ends a session's subscriptions.
func (t *hostSubs) endSession(session string) {
	t.mu.Lock()
	subs := t.bySession[session]
	delete(t.bySession, session)
	t.mu.Unlock()
	for _, hs := range subs {
		hs.end()
	}
}

// closeAll ends every subscription (serve stops).
func (t *hostSubs) closeAll() {
	t.mu.Lock()
	t.closed = true
	var subs []*hostSub
	for hs := range t.all {
		subs = append(subs, hs)
	}
	t.bySession = nil
	t.mu.Unlock()
	for _, hs := range subs {
		hs.end()
	}
}

// closeSubscriptions ends the host subscriptions of every front.
func (s *mcpxServer) closeSubscriptions() {
	for _, f := range s.allFronts() {
		f.subs.closeAll()
	}
}

// posts counts the requests in flight of each 2025-11-25 HTTP session
// (httpHandler). mcp-go hands a session's notifications to whichever of
// its streams takes them first, the standalone GET stream or the stream of
// a request in flight, and a request's stream that is finishing drops one
// it took too late (server/streamable_http.go, the POST's forwarder); so
// an update, which belongs to no request, is sent once none is in flight,
// and goes on the GET stream.
type sessionPosts struct {
	mu   sync.Mutex
	n    map[string]int
	idle map[string]chan struct{} // closed when the session's count drops to 0
}

// begin counts a request of session in flight until the returned end.
func (p *sessionPosts) begin(session string) (end func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n, p.idle = map[string]int{}, map[string]chan struct{}{}
	}
	if p.n[session] == 0 {
		p.idle[session] = make(chan struct{})
	}
	p.n[session]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.n[session]--; p.n[session] == 0 {
			close(p.idle[session])
			delete(p.n, session)
			delete(p.idle, session)
		}
	}
}

// quiet waits (at most max, or until ctx ends) until session has no
// request in flight.
func (p *sessionPosts) quiet(ctx context.Context, session string, max time.Duration) {
	p.mu.Lock()
	idle := p.idle[session]
	p.mu.Unlock()
	if idle == nil {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}
