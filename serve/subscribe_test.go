package serve

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
)

// serve declares resources.subscribe for a server that offers it, or that
// was never read; not for one that does not; the aggregate when any does.
func TestCanSubscribe(t *testing.T) {
	snap := func(caps string) *cache.Snapshot {
		return &cache.Snapshot{Capabilities: json.RawMessage(caps)}
	}
	cat := &catalog{
		served: []string{"yes", "no", "plain"},
		hashes: map[string]config.ServerHash{"yes": "h1", "no": "h2", "plain": "h3", "unread": "h4"},
		snaps: map[config.ServerHash]*cache.Snapshot{
			"h1": snap(`{"resources":{"subscribe":true}}`),
			"h2": snap(`{"resources":{"listChanged":true}}`),
			"h3": snap(`{"tools":{}}`),
		},
	}
	for ns, want := range map[string]bool{"yes": true, "no": false, "plain": false, "unread": true, "": true} {
		if got := canSubscribe(cat, ns); got != want {
			t.Errorf("canSubscribe(%q) = %v, want %v", ns, got, want)
		}
	}
	cat.served = []string{"no", "plain"}
	if canSubscribe(cat, "") {
		t.Error("the aggregate declares subscriptions though no server offers them")
	}
}

// An update waits for the session's requests in flight, not longer than
// its bound or its context.
func TestSessionPostsQuiet(t *testing.T) {
	var p sessionPosts
	p.quiet(context.Background(), "s", time.Minute) // none in flight: at once
	end := p.begin("s")
	end2 := p.begin("s")
	done := make(chan struct{})
	go func() {
		p.quiet(context.Background(), "s", time.Minute)
		close(done)
	}()
	end()
	select {
	case <-done:
		t.Fatal("quiet returned with a request still in flight")
	case <-time.After(50 * time.Millisecond):
	}
	end2()
	<-done
	end3 := p.begin("s")
	defer end3()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.quiet(ctx, "s", time.Minute) // its context ended: at once
}
