package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// methodLog reads the methods a fixture recorded (FIXTURE_METHOD_LOG).
func methodLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// learn lists spec through a fresh pool set (a daemon start) and returns
// the version it settled on and the methods the server received, but for
// the subscriptions/listen stream a 2026-07-28 connection opens beside
// them (listening says whether it did).
func learn(t *testing.T, spec Spec, log string) (v string, methods []string, listening bool) {
	t.Helper()
	os.Remove(log)
	p := newPools(t, Options{})
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	p.Close(context.Background())
	for _, m := range methodLog(t, log) {
		if m == "subscriptions/listen" {
			listening = true
			continue
		}
		methods = append(methods, m)
	}
	return l.ProtocolVersion, methods, listening
}

// The generation is learned at the first start and, remembered, costs
// nothing at the next: a 2026-07-28 server is asked server/discover (its
// handshake), a 2025-11-25 one initialize, with no probe of the other kind.
func TestGenerationLearnedOnce(t *testing.T) {
	for _, c := range []struct {
		generation string
		want       string
		first      []string // methods of the first start, in order
		next       []string // of a start that remembers the version
	}{
		{fixture.GenerationModern, mcp.LATEST_PROTOCOL_VERSION,
			[]string{"server/discover", "tools/list", "resources/list", "resources/templates/list"},
			[]string{"server/discover", "tools/list", "resources/list", "resources/templates/list"}},
		{fixture.GenerationLegacy, mcp.LATEST_LEGACY_PROTOCOL_VERSION,
			[]string{"server/discover", "initialize", "tools/list", "resources/list", "resources/templates/list"},
			[]string{"initialize", "tools/list", "resources/list", "resources/templates/list"}},
		// Both, with tasks (which only 2025-11-25 has): the older one.
		{"", mcp.LATEST_LEGACY_PROTOCOL_VERSION,
			[]string{"server/discover", "initialize", "tools/list", "resources/list", "resources/templates/list"},
			[]string{"initialize", "tools/list", "resources/list", "resources/templates/list"}},
	} {
		t.Run("serves "+c.generation, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "methods.log")
			spec := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_PROTOCOL": c.generation, "FIXTURE_METHOD_LOG": log})
			modern := c.want == mcp.LATEST_PROTOCOL_VERSION
			v, methods, listening := learn(t, spec, log)
			if v != c.want || !slices.Equal(methods, c.first) || listening != modern {
				t.Errorf("first start: version %q, methods %q, listening %v; want %q, %q, %v", v, methods, listening, c.want, c.first, modern)
			}
			spec.ProtocolVersion = v
			v, methods, listening = learn(t, spec, log)
			if v != c.want || !slices.Equal(methods, c.next) || listening != modern {
				t.Errorf("remembered start: version %q, methods %q, listening %v; want %q, %q, %v", v, methods, listening, c.want, c.next, modern)
			}
		})
	}
}

// A server whose generation changed since it was remembered fails the
// first request and is asked the other way at once; the pool set tells its
// owner, which remembers the new version.
func TestGenerationRelearned(t *testing.T) {
	for _, c := range []struct {
		remembered, serves, want string
	}{
		{mcp.LATEST_LEGACY_PROTOCOL_VERSION, fixture.GenerationModern, mcp.LATEST_PROTOCOL_VERSION},
		{"2025-06-18", fixture.GenerationModern, mcp.LATEST_PROTOCOL_VERSION},
		{mcp.LATEST_PROTOCOL_VERSION, fixture.GenerationLegacy, mcp.LATEST_LEGACY_PROTOCOL_VERSION},
	} {
		t.Run(c.remembered+" now "+c.serves, func(t *testing.T) {
			var mu sync.Mutex
			var told []string
			changed := make(chan struct{}, 1)
			p := newPools(t, Options{OnProtocolChanged: func(h config.ServerHash, v string) {
				mu.Lock()
				told = append(told, v)
				mu.Unlock()
				changed <- struct{}{}
			}})
			spec := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_PROTOCOL": c.serves})
			spec.ProtocolVersion = c.remembered
			if got := call(t, p, spec, Caller{}, "echo", `{"text":"hi"}`); got != "hi" {
				t.Fatalf("echo = %q", got)
			}
			<-changed
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(told, []string{c.want}) {
				t.Errorf("told %q, want %q", told, c.want)
			}
		})
	}
}

// Over streamable HTTP, both generations, the first start and a
// remembered one: a 2026-07-28 request carries the standard headers and
// _meta (mcp-go's server refuses it otherwise), and a call works.
func TestGenerationsOverHTTP(t *testing.T) {
	for _, gen := range []string{fixture.GenerationModern, fixture.GenerationLegacy} {
		t.Run(gen, func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			s := fixture.FullWith(fixture.Options{Generation: gen, OnRequest: func(m string) {
				mu.Lock()
				methods = append(methods, m)
				mu.Unlock()
			}})
			srv := httptest.NewServer(fixture.HTTPHandler(s))
			t.Cleanup(srv.Close)
			spec := Spec{Server: &config.Server{Name: "net", Transport: config.TransportHTTP, URL: srv.URL + "/mcp"}, Hash: "net-" + config.ServerHash(gen)}
			for i := range 2 {
				mu.Lock()
				methods = nil
				mu.Unlock()
				p := newPools(t, Options{})
				l, err := p.List(context.Background(), spec, Caller{})
				if err != nil {
					t.Fatalf("start %d: list: %v", i, err)
				}
				if got := call(t, p, spec, Caller{}, "echo", `{"text":"over http"}`); got != "over http" {
					t.Errorf("start %d: echo = %q", i, got)
				}
				p.Close(context.Background())
				mu.Lock()
				probed := slices.Contains(methods, "server/discover") && slices.Contains(methods, "initialize")
				mu.Unlock()
				if i == 1 && probed {
					t.Errorf("remembered start sent both server/discover and initialize: %q", methods)
				}
				spec.ProtocolVersion = l.ProtocolVersion
			}
			want := mcp.LATEST_PROTOCOL_VERSION
			if gen == fixture.GenerationLegacy {
				want = mcp.LATEST_LEGACY_PROTOCOL_VERSION
			}
			if spec.ProtocolVersion != want {
				t.Errorf("version %q, want %q", spec.ProtocolVersion, want)
			}
		})
	}
}

// withMeta adds the _meta members to any params: none, an empty object, an
// object without _meta, and one whose _meta has members of its own.
func TestWithMeta(t *testing.T) {
	fields := []byte(`"a":1`)
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, `{"_meta":{"a":1}}`},
		{json.RawMessage(`{}`), `{"_meta":{"a":1}}`},
		{map[string]string{"uri": "x"}, `{"_meta":{"a":1},"uri":"x"}`},
		{json.RawMessage(`{"name":"t","_meta":{"progressToken":"p"}}`), `{"_meta":{"a":1,"progressToken":"p"},"name":"t"}`},
		{json.RawMessage(`{"text":"_meta"}`), `{"_meta":{"a":1},"text":"_meta"}`},
	} {
		got, err := withMeta(c.in, fields)
		if err != nil {
			t.Errorf("withMeta(%v): %v", c.in, err)
			continue
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(c.want), &w) != nil || !jsonEqual(g, w) {
			t.Errorf("withMeta(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A server that exits on the probe is started once more for the
// handshake; one that ends before reading anything is started once, its
// start failing as it is.
func TestProbeEndsTheServer(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	wrap := func(env map[string]string) Spec {
		spec := fixtureSpec(t, config.Options{}, env)
		spec.Server.Args = []string{"-c", "echo start >> " + starts + "; exec " + fixtureBin}
		spec.Server.Command = "/bin/sh"
		return spec
	}
	count := func() int {
		b, _ := os.ReadFile(starts)
		defer os.Remove(starts)
		return strings.Count(string(b), "start")
	}

	p := newPools(t, Options{})
	spec := wrap(map[string]string{"FIXTURE_EXIT_ON_UNKNOWN": "1"})
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if l.ProtocolVersion != mcp.LATEST_LEGACY_PROTOCOL_VERSION || count() != 2 {
		t.Errorf("version %q after %d starts, want %s after 2", l.ProtocolVersion, count(), mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	}

	spec = wrap(map[string]string{"FIXTURE_FAIL_START": "boom"})
	spec.Hash += "-fail"
	_, err = p.List(context.Background(), spec, Caller{})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Stderr, "boom") {
		t.Errorf("failing server: %v", err)
	}
	if n := count(); n != 1 {
		t.Errorf("the failing server was started %d times, want once", n)
	}
}
