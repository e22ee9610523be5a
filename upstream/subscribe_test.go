package upstream

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// updates collects what a subscriber is told.
type updates struct {
	mu    sync.Mutex
	uris  []string
	ended []error
}

func (u *updates) subscriber(spec Spec, uri string) Subscriber {
	return Subscriber{
		Spec: func() (Spec, error) { return spec, nil },
		URI:  uri,
		Updated: func(uri string) {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.uris = append(u.uris, uri)
		},
		Ended: func(err error) {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.ended = append(u.ended, err)
		},
	}
}

func (u *updates) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.uris)
}

// bumpTold bumps the fixture's counter and returns how many subscriptions
// the server told ("count N, M subscribers told").
func bumpTold(t *testing.T, p *Pools, spec Spec) string {
	t.Helper()
	out := call(t, p, spec, Caller{}, "bump", `{}`)
	_, told, _ := strings.Cut(out, ", ")
	return told
}

// A resource subscription is held with the server once however many
// clients hold it, and released when the last one goes: with a
// 2025-11-25 server through resources/subscribe and resources/unsubscribe,
// with a 2026-07-28 server in its subscriptions/listen stream; over stdio
// and HTTP. Every subscriber hears each update. When the instance is
// restarted, the subscription is made again on the next one.
func TestSubscribeRefCounted(t *testing.T) {
	specs := generationSpecs(t, nil)
	for _, name := range []string{"legacy/stdio", "legacy/http", "modern/stdio", "modern/http"} {
		spec := specs[name]
		t.Run(name, func(t *testing.T) {
			p := newPools(t, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			var a, b updates
			subA, err := p.Subscribe(ctx, a.subscriber(spec, fixture.CounterURI))
			if err != nil {
				t.Fatalf("subscribe A: %v", err)
			}
			subB, err := p.Subscribe(ctx, b.subscriber(spec, fixture.CounterURI))
			if err != nil {
				t.Fatalf("subscribe B: %v", err)
			}
			// Two clients, one subscription with the server.
			if told := bumpTold(t, p, spec); told != "1 subscribers told" {
				t.Errorf("bump with two subscribers: %q, want the server to hold one subscription", told)
			}
			eventually(t, "both subscribers to hear the update", func() bool { return a.count() == 1 && b.count() == 1 })
			if a.uris[0] != fixture.CounterURI {
				t.Errorf("updated %q, want %q", a.uris[0], fixture.CounterURI)
			}

			// The first one leaving keeps the subscription for the other.
			subA.Close()
			subA.Close() // idempotent
			if told := bumpTold(t, p, spec); told != "1 subscribers told" {
				t.Errorf("bump after A left: %q, want the subscription kept for B", told)
			}
			eventually(t, "B to hear the second update", func() bool { return b.count() == 2 })
			if a.count() != 1 {
				t.Errorf("A heard %d updates after it closed, want 1", a.count())
			}

			// A restarted server gets the subscription again.
			if n := p.Restart(ctx, spec.Hash); n != 1 {
				t.Fatalf("restart stopped %d instances, want 1", n)
			}
			// (The old instance's stream may still be ending: bump until
			// an update reaches B.)
			eventually(t, "B to hear an update from the new instance", func() bool {
				before := b.count()
				bumpTold(t, p, spec)
				time.Sleep(100 * time.Millisecond)
				return b.count() > before
			})
			if told := bumpTold(t, p, spec); told != "1 subscribers told" {
				t.Errorf("bump after the restart: %q, want one subscription", told)
			}

			// The last one leaving releases it with the server.
			subB.Close()
			eventually(t, "the server to drop the subscription", func() bool {
				return bumpTold(t, p, spec) == "0 subscribers told"
			})
			if len(a.ended)+len(b.ended) > 0 {
				t.Errorf("ended: %v %v", a.ended, b.ended)
			}
		})
	}
}

// A server without resources.subscribe is not asked: Subscribe says so.
func TestSubscribeNotOffered(t *testing.T) {
	p := newPools(t, Options{})
	srv := httptest.NewServer(fixture.HTTPHandler(fixture.Demo()))
	t.Cleanup(srv.Close)
	spec := Spec{Server: &config.Server{Name: "demo", Transport: config.TransportHTTP, URL: srv.URL + "/mcp"}, Hash: "demo-http"}
	var u updates
	_, err := p.Subscribe(context.Background(), u.subscriber(spec, "note://x"))
	if !errors.Is(err, ErrNoSubscriptions) {
		t.Fatalf("subscribe on the demo server: %v, want ErrNoSubscriptions", err)
	}
	// The instance taken for it is not pinned any more, once the keeper,
	// which told Subscribe, has seen nobody is left and let it go.
	eventually(t, "the instance taken for it to be unpinned", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, in := range p.pools[spec.Hash].insts {
			if in.pins != 0 {
				return false
			}
		}
		return true
	})
}

// A subscription whose server left the config ends with the reason when
// it would be made again.
func TestSubscribeSpecGone(t *testing.T) {
	spec := generationSpecs(t, nil)["legacy/http"]
	p := newPools(t, Options{})
	gone := errors.New("namespace left the config")
	var mu sync.Mutex
	var specErr error
	var u updates
	s := u.subscriber(spec, fixture.CounterURI)
	s.Spec = func() (Spec, error) {
		mu.Lock()
		defer mu.Unlock()
		return spec, specErr
	}
	sub, err := p.Subscribe(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mu.Lock()
	specErr = gone
	mu.Unlock()
	p.Restart(context.Background(), spec.Hash)
	eventually(t, "the subscription to end", func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.ended) == 1 && errors.Is(u.ended[0], gone)
	})
}

// An update of a resource below the one subscribed to reaches its
// subscribers (the spec allows it); a URI that merely starts alike does
// not.
func TestBelow(t *testing.T) {
	for _, c := range []struct {
		uri, base string
		want      bool
	}{
		{"file:///a/b", "file:///a", true},
		{"file:///a/b", "file:///a/", true},
		{"file:///ab", "file:///a", false},
		{"file:///a", "file:///a/b", false},
	} {
		if got := below(c.uri, c.base); got != c.want {
			t.Errorf("below(%q, %q) = %v", c.uri, c.base, got)
		}
	}
}
