package upstream

import (
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
)

// limitTransport bounds what a network server sends: a JSON response body
// as a whole, an event stream (SSE, streamable HTTP's streamed answers)
// per event, at max bytes. Over the bound the body read fails, the request
// in flight fails, and tripped is set so the connection reports a
// *MessageTooLargeError and is dropped. Safe for concurrent use.
type limitTransport struct {
	base    http.RoundTripper
	max     int64
	tripped atomic.Bool
	// onTrip runs once, at the first message over the bound: it closes
	// the transport, so requests waiting for answers on an event stream
	// (which the failed read does not end) fail at once.
	onTrip   func()
	tripOnce sync.Once
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &limitBody{rc: resp.Body, t: t, perEvent: mt == "text/event-stream"}
	return resp, nil
}

// limitBody counts a body's bytes (per event: reset at each blank line).
type limitBody struct {
	rc       io.ReadCloser
	t        *limitTransport
	perEvent bool
	cur      int64
	prevNL   bool
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.t.tripped.Load() && b.cur > b.t.max {
		return 0, errMessageTooLarge
	}
	n, err := b.rc.Read(p)
	for _, c := range p[:n] {
		if b.perEvent {
			switch {
			case c == '\n' && b.prevNL:
				b.cur = 0
				continue
			case c == '\n':
				b.prevNL = true
			case c != '\r':
				b.prevNL = false
			}
		}
		b.cur++
	}
	if b.cur > b.t.max {
		b.t.tripped.Store(true)
		if b.t.onTrip != nil {
			b.t.tripOnce.Do(b.t.onTrip)
		}
		return 0, errMessageTooLarge
	}
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
