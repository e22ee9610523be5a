package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A 2026-07-28 server sends notifications outside a request only on a
// subscriptions/listen stream the client opened, and only the kinds the
// client asked for. A connection to such a server keeps one open for the
// list changes the server announces (its capabilities' listChanged), so
// notifications/*/list_changed reaches the pool set exactly as it does from
// a 2025-11-25 session, and for the resources its clients subscribed to
// (the stream's resourceSubscriptions, which replace resources/subscribe:
// subscribe.go), whose notifications/resources/updated reach them. The
// stream is a request that stays unanswered while it lasts; one that ends
// while the connection lives is opened again, backing off. A stream's
// filter is fixed when it opens, so another set of resources is another
// stream: opened first, the old one ended once the new one is
// acknowledged.

// listenStream is one subscriptions/listen stream (re-opened while it
// lasts).
type listenStream struct {
	stop context.CancelFunc
	done chan struct{}
	// first carries the outcome of the stream's first opening: the
	// acknowledgement or the error that ended it. Buffered, written once.
	first chan listenAck
	sent  bool // first was written (guarded by conn.listenMu)
}

// listenAck is what the server established on a stream (or why not).
type listenAck struct {
	resources []string // the acknowledged resourceSubscriptions
	err       error
}

// listenFilter is what the connection subscribes to: the list changes
// the server announces and the resources uris (nil: nothing).
func (cn *conn) listenFilter(uris []string) map[string]any {
	f := map[string]any{}
	if t := cn.caps.Tools; t != nil && t.ListChanged {
		f["toolsListChanged"] = true
	}
	if p := cn.caps.Prompts; p != nil && p.ListChanged {
		f["promptsListChanged"] = true
	}
	if r := cn.caps.Resources; r != nil && r.ListChanged {
		f["resourcesListChanged"] = true
	}
	if len(uris) > 0 {
		f["resourceSubscriptions"] = uris
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// listenBackoff bounds the wait before a stream that ended is opened again.
var listenBackoff = [2]time.Duration{time.Second, 30 * time.Second}

// startListening opens the subscriptions/listen stream for list changes,
// when the server announces any, until stopListening; it does not wait
// for the acknowledgement.
func (cn *conn) startListening() {
	filter := cn.listenFilter(nil)
	if filter == nil {
		return
	}
	cn.listenMu.Lock()
	defer cn.listenMu.Unlock()
	cn.listen = cn.openListen(filter)
}

// listenFor replaces the stream by one that also subscribes to uris and
// returns the resources the server acknowledged. The old stream stays
// until the new one is acknowledged (list changes are not missed), and
// stays when the new one fails. Calls are serialized by the caller
// (subscribe.go's keeper, one per connection).
func (cn *conn) listenFor(ctx context.Context, uris []string) ([]string, error) {
	filter := cn.listenFilter(uris)
	var next *listenStream
	if filter != nil {
		cn.listenMu.Lock()
		next = cn.openListen(filter)
		cn.listenMu.Unlock()
		var ack listenAck
		select {
		case ack = <-next.first:
		case <-ctx.Done():
			ack.err = ctx.Err()
		case <-cn.stopped:
			ack.err = ErrClosed
		}
		if ack.err != nil {
			next.end()
			return nil, ack.err
		}
		cn.replaceListen(next)
		return ack.resources, nil
	}
	cn.replaceListen(nil)
	return nil, nil
}

// openListen starts a stream with filter. Called with listenMu held.
func (cn *conn) openListen(filter map[string]any) *listenStream {
	ctx, cancel := context.WithCancel(context.Background())
	ls := &listenStream{stop: cancel, done: make(chan struct{}), first: make(chan listenAck, 1)}
	params := map[string]any{"notifications": filter}
	go func() {
		defer close(ls.done)
		wait := listenBackoff[0]
		for {
			id := cn.nextID.Add(1)
			cn.listenMu.Lock()
			if cn.acks == nil {
				cn.acks = map[int64]*listenStream{}
			}
			cn.acks[id] = ls
			cn.listenMu.Unlock()
			opened := time.Now()
			_, err := cn.requestID(ctx, mcp.NewRequestId(id), string(mcp.MethodSubscriptionsListen), params)
			cn.listenMu.Lock()
			delete(cn.acks, id)
			if err == nil {
				err = errors.New("the server ended the stream")
			}
			ls.answer(listenAck{err: fmt.Errorf("subscriptions/listen: %w", err)})
			cn.listenMu.Unlock()
			if ctx.Err() != nil {
				return
			}
			var re *RPCError
			if errors.As(err, &re) && (re.Code == mcp.METHOD_NOT_FOUND || re.Code == mcp.INVALID_PARAMS) {
				return // the server does not offer the stream after all
			}
			if time.Since(opened) > listenBackoff[1] {
				wait = listenBackoff[0] // it lasted: a fresh start
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, listenBackoff[1])
		}
	}()
	return ls
}

// answer records the stream's first outcome. Called with listenMu held.
func (ls *listenStream) answer(a listenAck) {
	if !ls.sent {
		ls.sent = true
		ls.first <- a
	}
}

// end stops the stream (the server is told the request is cancelled) and
// waits for its goroutine.
func (ls *listenStream) end() {
	ls.stop()
	<-ls.done
}

// acknowledged handles notifications/subscriptions/acknowledged: the
// stream it names (its subscriptionId, the listen request's id) learns
// what the server established. A server that names no stream acknowledges
// the one waiting, when only one is.
func (cn *conn) acknowledged(n mcp.JSONRPCNotification) {
	cn.listening.Store(true)
	raw, err := json.Marshal(n.Params)
	if err != nil {
		return
	}
	var p struct {
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	cn.listenMu.Lock()
	defer cn.listenMu.Unlock()
	var ls *listenStream
	var id int64
	if json.Unmarshal(p.Meta[mcp.MetaKeySubscriptionID], &id) == nil && cn.acks[id] != nil {
		ls = cn.acks[id]
	} else {
		for _, s := range cn.acks {
			if !s.sent {
				if ls != nil {
					return // which one? neither learns it; each times out or ends
				}
				ls = s
			}
		}
	}
	if ls != nil {
		ls.answer(listenAck{resources: slices.Clone(p.Notifications.ResourceSubscriptions)})
	}
}

// stopListening ends the stream and waits for its goroutine.
func (cn *conn) stopListening() { cn.replaceListen(nil) }

// replaceListen makes next (nil: none) the stream and ends the old one,
// waiting for its goroutine outside the lock.
func (cn *conn) replaceListen(next *listenStream) {
	cn.listenMu.Lock()
	old := cn.listen
	cn.listen = next
	cn.listenMu.Unlock()
	if old != nil {
		old.end()
	}
}
