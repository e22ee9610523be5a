package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// elicitWorld is a daemon over the fixture restricted to each generation.
func elicitWorld(t *testing.T) *testDaemon {
	w := newWorld(t, `{"mcpServers": {
		"fx": {"command": "@FIXTURE@", "env": {"FIXTURE_PROTOCOL": "modern"}},
		"fl": {"command": "@FIXTURE@", "env": {"FIXTURE_PROTOCOL": "legacy"}}}}`)
	return w.start()
}

// askCall posts a streamed call with elicit ask and answers each elicit
// frame with answer (nil: leave it unanswered); it returns the frames.
func (d *testDaemon) askCall(ctx context.Context, ns, tool string, answer func(api.Elicitation) json.RawMessage) []api.StreamFrame {
	d.t.Helper()
	b, _ := json.Marshal(api.CallRequest{Namespace: ns, Tool: tool, Stream: true, Elicit: api.ElicitAsk})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://mcpx"+api.PathCall, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var frames []api.StreamFrame
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var f api.StreamFrame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			d.t.Fatalf("frame %q: %v", sc.Text(), err)
		}
		frames = append(frames, f)
		if f.Elicit != nil && answer != nil {
			if res := answer(*f.Elicit); res != nil {
				d.mustOK(http.MethodPost, api.PathElicit, api.ElicitAnswer{ID: f.Elicit.ID, Result: res}, nil)
			}
		}
	}
	return frames
}

// With elicit ask the question goes out on the stream and its answer,
// posted to /v1/elicit, reaches the tool; an answer to no waiting question
// is 404, a malformed one 400.
func TestElicitAsk(t *testing.T) {
	d := elicitWorld(t)
	for _, ns := range []string{"fx", "fl"} {
		var asked api.Elicitation
		frames := d.askCall(context.Background(), ns, "ask_profile", func(e api.Elicitation) json.RawMessage {
			asked = e
			return api.ElicitResult(api.ActionAccept, map[string]any{"name": "Lin", "age": 7, "colour": "red"})
		})
		last := frames[len(frames)-1]
		if last.Result == nil || text(t, last.Result) != `accept {"age":7,"colour":"red","name":"Lin"}` {
			t.Errorf("%s: last frame %+v", ns, last)
		}
		var p api.ElicitParams
		if asked.ID == "" || asked.Namespace != ns || json.Unmarshal(asked.Params, &p) != nil || p.Message != "Tell the fixture about yourself" {
			t.Errorf("%s: asked %+v", ns, asked)
		}
		if code, e := d.do(http.MethodPost, api.PathElicit, api.ElicitAnswer{ID: asked.ID, Result: api.ElicitResult(api.ActionDecline, nil)}, nil); code != http.StatusNotFound || e.Code != api.CodeNotFound {
			t.Errorf("%s: a second answer: %d %+v", ns, code, e)
		}
	}
	if code, _ := d.do(http.MethodPost, api.PathElicit, api.ElicitAnswer{ID: "x", Result: json.RawMessage(`{"action":"maybe"}`)}, nil); code != http.StatusBadRequest {
		t.Errorf("bad action: %d", code)
	}
	if code, e := d.do(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "ask_profile", Elicit: api.ElicitAsk}, nil); code != http.StatusBadRequest || !strings.Contains(e.Error, "streamed") {
		t.Errorf("ask without a stream: %d %+v", code, e)
	}
}

// A caller that goes away cancels the question; one that never answers has
// it cancelled after elicitWait.
func TestElicitAbandoned(t *testing.T) {
	defer func(w time.Duration) { elicitWait = w }(elicitWait)
	elicitWait = time.Second
	d := elicitWorld(t)
	for _, ns := range []string{"fx", "fl"} {
		frames := d.askCall(context.Background(), ns, "ask_profile", func(api.Elicitation) json.RawMessage { return nil })
		if last := frames[len(frames)-1]; last.Result == nil || text(t, last.Result) != "cancel" {
			t.Errorf("%s unanswered: %+v", ns, last)
		}
	}
	// Going away: the stream is dropped at the question; the server hears
	// cancel, and the daemon answers the next call as usual.
	ctx, cancel := context.WithCancel(context.Background())
	d.askCall(ctx, "fl", "ask_profile", func(api.Elicitation) json.RawMessage { cancel(); return nil })
	if _, r, e := d.call("fl", "echo", `{"text":"after"}`, false); e != nil || text(t, r) != "after" {
		t.Errorf("after the caller left: %+v %+v", r, e)
	}
}

// Without asking: defaults fill a form that has them, a URL is declined;
// decline declines.
func TestElicitDefaultsAndDecline(t *testing.T) {
	d := elicitWorld(t)
	for _, c := range []struct{ ns, tool, mode, want string }{
		{"fx", "ask_profile", api.ElicitDefaults, `accept {"age":36,"colour":"green","name":"Ada","subscribe":false}`},
		{"fl", "ask_profile", api.ElicitDefaults, `accept {"age":36,"colour":"green","name":"Ada","subscribe":false}`},
		{"fx", "ask_url", api.ElicitDefaults, "decline"},
		{"fl", "ask_profile", "", "decline"},
		{"fx", "ask_profile", api.ElicitDecline, "decline"},
	} {
		var r api.CallResponse
		d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: c.ns, Tool: c.tool, Elicit: c.mode}, &r)
		if got := text(t, &r); got != c.want {
			t.Errorf("%s.%s elicit %q = %q, want %q", c.ns, c.tool, c.mode, got, c.want)
		}
	}
}

// A 2026-07-28 server's list results carry caching hints (mcp-go's: ttlMs
// 0, private): the snapshot keeps them, and a call on a stale snapshot
// reads the lists again (at most every revalidateFloor). A snapshot
// without hints is read again only on list_changed or refresh.
func TestCachingHints(t *testing.T) {
	defer func(f time.Duration) { revalidateFloor = f }(revalidateFloor)
	revalidateFloor = 0
	w := newWorld(t, "")
	logs := map[string]string{"fx": filepath.Join(w.root, "fx.log"), "fl": filepath.Join(w.root, "fl.log")}
	w.writeConfig(`{"mcpServers": {
		"fx": {"command": "@FIXTURE@", "env": {"FIXTURE_PROTOCOL": "modern", "FIXTURE_METHOD_LOG": "` + logs["fx"] + `"}},
		"fl": {"command": "@FIXTURE@", "env": {"FIXTURE_PROTOCOL": "legacy", "FIXTURE_METHOD_LOG": "` + logs["fl"] + `"}}}}`)
	d := w.start()
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{}, nil)
	fx, fl := d.loadSnapshot("fx"), d.loadSnapshot("fl")
	if fx == nil || fx.TTLMs == nil || *fx.TTLMs != 0 || fx.CacheScope != "private" {
		t.Errorf("fx snapshot hints: %+v", fx)
	}
	if fl == nil || fl.TTLMs != nil || fl.CacheScope != "" {
		t.Errorf("fl snapshot hints: %+v", fl)
	}
	lists := func(ns string) int {
		b, _ := os.ReadFile(logs[ns])
		return strings.Count(string(b), "tools/list")
	}
	before := map[string]int{"fx": lists("fx"), "fl": lists("fl")}
	for _, ns := range []string{"fx", "fl"} {
		if _, _, e := d.call(ns, "echo", `{"text":"x"}`, false); e != nil {
			t.Fatalf("%s: %+v", ns, e)
		}
	}
	eventually(t, "the stale snapshot to be read again", func() bool { return lists("fx") > before["fx"] })
	time.Sleep(500 * time.Millisecond)
	if lists("fl") != before["fl"] {
		t.Errorf("the snapshot without hints was read again")
	}
}

// loadSnapshot reads ns's snapshot from the cache.
func (d *testDaemon) loadSnapshot(ns string) *cache.Snapshot {
	d.t.Helper()
	store, err := cache.OpenStore(d.w.paths.CAS())
	if err != nil {
		d.t.Fatal(err)
	}
	snap, err := cache.NewSchemas(store, d.w.paths.Schemas()).Load(config.ServerHash(d.namespaces()[ns].ServerHash))
	if err != nil {
		d.t.Fatalf("snapshot of %s: %v", ns, err)
	}
	return snap
}
