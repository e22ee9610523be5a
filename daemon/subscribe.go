package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Resource subscriptions for the daemon's clients (serve's hosts): POST
// /v1/subscribe holds one for as long as its request lasts, and streams
// the server's updates. The pools hold each resource's subscription with
// the server once however many streams want it (upstream/subscribe.go),
// and make it again on a new instance when the server is restarted or
// replaced. A stream ends with an error frame when the server left the
// config or was redefined (the client subscribes again, to the new
// definition), and when the daemon stops (the client subscribes again, to
// the next daemon).

// errRedefined ends a subscription whose server's definition changed.
var errRedefined = errors.New("the server was redefined in the config; subscribe again")

// subscribeQueue is how many updates may wait for a slow client. An
// update says only that a resource changed: one that finds the queue full
// is told already by those waiting.
const subscribeQueue = 64

// subscribeStreams ends every subscription stream when the daemon stops
// (http.Server.RegisterOnShutdown): a stream never ends by itself, and
// the drain would wait for it to its bound.
type subscribeStreams struct {
	mu   sync.Mutex
	end  chan struct{}
	over bool
}

func (s *subscribeStreams) ended() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == nil {
		s.end = make(chan struct{})
	}
	return s.end
}

func (s *subscribeStreams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == nil {
		s.end = make(chan struct{})
	}
	if !s.over {
		s.over = true
		close(s.end)
	}
}

// serveSubscribe answers POST /v1/subscribe.
func (d *daemon) serveSubscribe(w http.ResponseWriter, r *http.Request) error {
	var req api.SubscribeRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Namespace == "" || req.URI == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a subscription needs a namespace and a URI")
	}
	ns := req.Namespace
	st := d.state.Load()
	if _, err := st.server(ns); err != nil {
		return err
	}
	hash := st.hashes[ns]
	spec := func() (upstream.Spec, error) {
		st := d.state.Load()
		s, err := st.server(ns)
		if err != nil {
			return upstream.Spec{}, err
		}
		if st.hashes[ns] != hash {
			return upstream.Spec{}, apiErr(http.StatusConflict, api.CodeConfig, "%s: %v", ns, errRedefined)
		}
		return d.spec(r.Context(), st, s, d.snapshot(st, ns))
	}

	frames := make(chan api.SubscribeFrame, subscribeQueue)
	endedBy := make(chan error, 1)
	sub, err := d.pools.Subscribe(r.Context(), upstream.Subscriber{
		Spec:   spec,
		Caller: upstream.Caller{Session: req.Session, Cwd: req.Cwd},
		URI:    req.URI,
		Updated: func(uri string) {
			select {
			case frames <- api.SubscribeFrame{Updated: &api.ResourceRef{Namespace: ns, URI: uri}}:
			default:
			}
		},
		Ended: func(err error) {
			select {
			case endedBy <- err:
			default:
			}
		},
	})
	d.pokeStatus()
	if err != nil {
		if errors.Is(err, upstream.ErrNoSubscriptions) {
			e := apiErr(http.StatusNotImplemented, api.CodeNoSubscriptions, "subscribe to %s on %s: %v", req.URI, ns, err)
			e.body.Namespace = ns
			return e
		}
		e := mapError(err)
		if e.body.Namespace == "" {
			e.body.Namespace = ns
		}
		return e
	}
	defer sub.Close()
	d.log.Printf("subscribed to %s on %s", req.URI, ns)
	defer d.log.Printf("unsubscribed from %s on %s", req.URI, ns)

	w.Header().Set("Content-Type", api.ContentTypeNDJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var line bytes.Buffer
	enc := newEncoder(&line)
	write := func(f api.SubscribeFrame) error {
		line.Reset()
		if err := enc.Encode(f); err != nil {
			return err
		}
		if _, err := w.Write(line.Bytes()); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	if write(api.SubscribeFrame{Subscribed: &api.ResourceRef{Namespace: ns, URI: req.URI}}) != nil {
		return nil
	}
	for {
		select {
		case f := <-frames:
			if write(f) != nil {
				return nil // the client went away
			}
		case err := <-endedBy:
			e := mapError(err)
			if e.body.Namespace == "" {
				e.body.Namespace = ns
			}
			_ = write(api.SubscribeFrame{Error: &e.body})
			return nil
		case <-d.subStreams.ended():
			_ = write(api.SubscribeFrame{Error: &api.Error{Code: api.CodeShuttingDown, Namespace: ns,
				Error: fmt.Sprintf("the daemon stops; subscribe to %s again", req.URI)}})
			return nil
		case <-r.Context().Done():
			return nil
		}
	}
}
