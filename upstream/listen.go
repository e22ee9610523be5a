package upstream

import (
	"context"
	"errors"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A 2026-07-28 server sends notifications outside a request only on a
// subscriptions/listen stream the client opened, and only the kinds the
// client asked for. A connection to such a server keeps one open for the
// list changes the server announces (its capabilities' listChanged), so
// notifications/*/list_changed reaches the pool set exactly as it does from
// a 2025-11-25 session. The stream is a request that stays unanswered while
// it lasts; one that ends while the connection lives is opened again,
// backing off.

// listenFilter is what the connection subscribes to (nil: nothing the
// server announces).
func (cn *conn) listenFilter() map[string]bool {
	f := map[string]bool{}
	if t := cn.caps.Tools; t != nil && t.ListChanged {
		f["toolsListChanged"] = true
	}
	if p := cn.caps.Prompts; p != nil && p.ListChanged {
		f["promptsListChanged"] = true
	}
	if r := cn.caps.Resources; r != nil && r.ListChanged {
		f["resourcesListChanged"] = true
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// listenBackoff bounds the wait before a stream that ended is opened again.
var listenBackoff = [2]time.Duration{time.Second, 30 * time.Second}

// startListening opens the subscriptions/listen stream, when the server
// announces anything to listen for, until stopListening.
func (cn *conn) startListening() {
	filter := cn.listenFilter()
	if filter == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cn.listenStop = cancel
	cn.listenDone = make(chan struct{})
	params := map[string]any{"notifications": filter}
	go func() {
		defer close(cn.listenDone)
		wait := listenBackoff[0]
		for {
			opened := time.Now()
			_, err := cn.request(ctx, string(mcp.MethodSubscriptionsListen), params)
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
}

// stopListening ends the stream (the server is told the request is
// cancelled) and waits for its goroutine.
func (cn *conn) stopListening() {
	if cn.listenStop == nil {
		return
	}
	cn.listenStop()
	<-cn.listenDone
}
