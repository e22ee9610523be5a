package upstream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// heard collects the log lines one observed call receives.
type heard struct {
	mu    sync.Mutex
	lines []string
}

func (h *heard) observe(n Notice) {
	if n.Kind != NoticeLog {
		return
	}
	var s string
	_ = json.Unmarshal(n.Data, &s)
	h.mu.Lock()
	h.lines = append(h.lines, s)
	h.mu.Unlock()
}

func (h *heard) has(line string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.lines, line)
}

// A log line reaches the calls in flight on the server process that sent
// it, and no call on another instance of the same server: with session
// scope those serve other sessions.
func TestLogLinesStayOnTheirInstance(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started.log")
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{Scope: config.ScopeSession}, map[string]string{fixture.StartedLogEnv: started})
	a, b := Caller{Session: "a"}, Caller{Session: "b"}

	// One long observed call in flight on each session's instance.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var heardA, heardB heard
	for _, w := range []struct {
		c Caller
		h *heard
	}{{a, &heardA}, {b, &heardB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.CallObserved(ctx, spec, w.c, "slow", json.RawMessage(`{"seconds":60}`), w.h.observe)
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	eventually(t, "both slow calls to start", func() bool {
		b, _ := os.ReadFile(started)
		return strings.Count(string(b), "started") == 2
	})
	if n := p.Live(spec.Hash); n != 2 {
		t.Fatalf("Live = %d, want one instance per session", n)
	}

	call(t, p, spec, a, "log", `{"text":"from a"}`)
	call(t, p, spec, b, "log", `{"text":"from b"}`)
	eventually(t, "each slow call to hear its own instance", func() bool {
		return heardA.has("from a") && heardB.has("from b")
	})
	// Each line was delivered to every listener at once, so what the
	// other call heard is final.
	if heardA.has("from b") || heardB.has("from a") {
		t.Errorf("a log line crossed instances: a heard %q, b heard %q", heardA.lines, heardB.lines)
	}

	// A call that is over hears nothing more: a new call on a's instance
	// hears the next line, the cancelled one does not.
	cancel()
	wg.Wait()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var heardC heard
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.CallObserved(ctx2, spec, a, "slow", json.RawMessage(`{"seconds":60}`), heardC.observe)
	}()
	eventually(t, "the third slow call to start", func() bool {
		b, _ := os.ReadFile(started)
		return strings.Count(string(b), "started") == 3
	})
	call(t, p, spec, a, "log", `{"text":"after"}`)
	eventually(t, "the new call to hear the line", func() bool { return heardC.has("after") })
	cancel2()
	<-done
	if heardA.has("after") {
		t.Errorf("a finished call heard a later line: %q", heardA.lines)
	}
}
