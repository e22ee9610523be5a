package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// stream is one POST /v1/subscribe, read in the background.
type stream struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	frames []api.SubscribeFrame
	done   chan struct{}
}

// subscribe opens a subscription stream and returns once its first frame
// came (failing the test on an error answer).
func (d *testDaemon) subscribe(t *testing.T, ns, uri string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	body, _ := json.Marshal(api.SubscribeRequest{Namespace: ns, URI: uri})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://mcpx"+api.PathSubscribe, bytes.NewReader(body))
	resp, err := d.http.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("subscribe: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		t.Fatalf("subscribe %s %s: status %d", ns, uri, resp.StatusCode)
	}
	s := &stream{cancel: cancel, done: make(chan struct{})}
	first := make(chan struct{})
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		once := sync.OnceFunc(func() { close(first) })
		defer once()
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				return
			}
			var f api.SubscribeFrame
			if json.Unmarshal(line, &f) != nil {
				return
			}
			s.mu.Lock()
			s.frames = append(s.frames, f)
			s.mu.Unlock()
			once()
		}
	}()
	<-first
	if fs := s.all(); len(fs) == 0 || fs[0].Subscribed == nil {
		t.Fatalf("first frame: %+v", fs)
	}
	t.Cleanup(func() { s.close() })
	return s
}

func (s *stream) all() []api.SubscribeFrame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.SubscribeFrame(nil), s.frames...)
}

func (s *stream) updates() int {
	n := 0
	for _, f := range s.all() {
		if f.Updated != nil {
			n++
		}
	}
	return n
}

func (s *stream) close() {
	s.cancel()
	<-s.done
}

// bump calls the fixture's bump tool and returns "N subscribers told".
func (d *testDaemon) bump(t *testing.T, ns string) string {
	t.Helper()
	_, resp, e := d.call(ns, "bump", `{}`, true)
	if e != nil {
		t.Fatalf("bump: %+v", *e)
	}
	_, told, _ := strings.Cut(text(t, resp), ", ")
	return told
}

// Two clients subscribed to one resource share one subscription with the
// server: each hears every update, the first leaving keeps it for the
// other, the last leaving releases it. A server without subscriptions is
// refused with 501, and a stopping daemon ends the streams with an error
// frame instead of waiting for them.
func TestSubscribeThroughTheDaemon(t *testing.T) {
	w, d, _ := startFixture(t)
	a := d.subscribe(t, "fx", fixture.CounterURI)
	b := d.subscribe(t, "fx", fixture.CounterURI)
	if told := d.bump(t, "fx"); told != "1 subscribers told" {
		t.Errorf("two streams: %q, want one subscription with the server", told)
	}
	eventually(t, "both streams to hear the update", func() bool { return a.updates() == 1 && b.updates() == 1 })
	if f := a.all()[1].Updated; f.URI != fixture.CounterURI || f.Namespace != "fx" {
		t.Errorf("updated frame %+v", f)
	}

	a.close()
	if told := d.bump(t, "fx"); told != "1 subscribers told" {
		t.Errorf("after the first left: %q, want the subscription kept", told)
	}
	eventually(t, "the second stream to hear the next update", func() bool { return b.updates() == 2 })
	b.close()
	eventually(t, "the server to drop the subscription", func() bool { return d.bump(t, "fx") == "0 subscribers told" })

	// The demo server offers no subscriptions.
	w.writeConfig(`{"mcpServers": {"demo": {"command": "@FIXTURE@", "env": {"FIXTURE_DEMO": "1"}}, "fx": {"command": "@FIXTURE@"}}}`)
	body := api.SubscribeRequest{Namespace: "demo", URI: "note://x"}
	if code, e := d.do(http.MethodPost, api.PathSubscribe, body, nil); code != http.StatusNotImplemented || e == nil || e.Code != api.CodeNoSubscriptions {
		t.Errorf("subscribe on the demo server: %d %+v, want 501 %s", code, e, api.CodeNoSubscriptions)
	}

	// Stopping ends a stream at once, saying why.
	c := d.subscribe(t, "fx", fixture.CounterURI)
	stopped := make(chan error, 1)
	go func() { stopped <- d.stop() }()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream outlived the daemon's stop")
	}
	fs := c.all()
	if last := fs[len(fs)-1]; last.Error == nil || last.Error.Code != api.CodeShuttingDown {
		t.Errorf("last frame %+v, want an error %s", last, api.CodeShuttingDown)
	}
	if err := <-stopped; err != nil {
		t.Errorf("stop: %v", err)
	}
}
