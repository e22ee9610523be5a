package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 2026-07-28 server asking for roots during a call gets the roots of a
// host that declared them, asked of the host through serve (a 2025-11-25
// host on its session, on stdio and HTTP; a 2026-07-28 host with an
// input_required result); a host that declared none has the entry's
// mcpx.roots answered for it, as `mcpx call` does. A 2025-11-25 server's
// session is shared by every caller and keeps the entry's roots.
func TestServeRelaysRoots(t *testing.T) {
	e := NewEnv(t)
	data := filepath.Join(e.Work, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	modern := map[string]string{"FIXTURE_PROTOCOL": "modern"}
	cfg := map[string]any{"mcpServers": map[string]any{
		"fx":  map[string]any{"command": fixtureBin, "env": modern},
		"fxr": map[string]any{"command": fixtureBin, "env": modern, "mcpx": map[string]any{"roots": []string{"data"}}},
		"flr": map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "legacy"}, "mcpx": map[string]any{"roots": []string{"data"}}},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
	e.MustOK("refresh")
	hostRoots := []map[string]any{{"uri": "file:///host/src", "name": "src"}, {"uri": "file:///host/docs"}}
	const fromHost = "file:///host/src\nfile:///host/docs"
	entry := "file://" + data
	base := serveHTTP(t, e)

	for _, c := range []struct {
		ns    string
		roots []map[string]any // the host's (nil: it declares none)
		want  string
		asked int // times the host is asked
	}{
		{"fx", hostRoots, fromHost, 1},
		{"fxr", hostRoots, fromHost, 1},
		{"fxr", nil, entry, 0},
		{"flr", hostRoots, entry, 0},
	} {
		host := "with roots"
		if c.roots == nil {
			host = "without roots"
		}
		t.Run("2025-stdio/"+c.ns+"/"+host, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "roots": c.roots, "steps": []map[string]any{
				{"op": "call", "name": c.ns + ".roots"},
			}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || got.text() != c.want {
				t.Errorf("%+v, want %q", got, c.want)
			}
			if r.RootsAsked != c.asked {
				t.Errorf("the host was asked %d times, want %d", r.RootsAsked, c.asked)
			}
		})
		t.Run("2025-http/"+c.ns+"/"+host, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"roots": c.roots, "steps": []map[string]any{{"op": "call", "name": "roots"}}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || got.text() != c.want {
				t.Errorf("%+v, want %q", got, c.want)
			}
		})
		t.Run("2026-http/"+c.ns+"/"+host, func(t *testing.T) {
			r := host2026(t, e, map[string]any{"url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"roots": c.roots, "calls": []map[string]any{{"name": "roots"}}})
			if res := r.Results[0]; res.Result == nil || res.Result.IsError || res.Result.text() != c.want {
				t.Errorf("%+v %+v, want %q", res.Result, res.Error, c.want)
			}
			if r.RootsAsked != c.asked {
				t.Errorf("the host was asked %d times, want %d", r.RootsAsked, c.asked)
			}
		})
	}
	// No roots anywhere: the call fails naming why, as `mcpx call` does;
	// for the host, the server needed a capability it did not declare
	// (MissingRequiredClientCapabilityError).
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{{"op": "call", "name": "fx.roots"}}})
	if s := r.Steps[0]; s.Error == nil || s.Error.Code != float64(-32021) || !strings.Contains(string(s.Error.Data), `"roots"`) {
		t.Errorf("no roots: %+v %s", s.Error, s.Result)
	}
}

// A 2026-07-28 server's round that asks for several things at once (the
// conformance fixture's name, sampled greeting and roots) reaches a
// 2026-07-28 host as one input_required round with all three, so the
// call takes two tools/call requests; a 2025-11-25 host is asked each on
// its session.
func TestServeRelaysARoundWhole(t *testing.T) {
	e := NewEnv(t)
	cfg := map[string]any{"mcpServers": map[string]any{
		// (Its tools are not marked read-only: allowed, as for a server
		// the user trusts.)
		"conf": map[string]any{"command": fixtureBin, "args": []string{"--conformance"},
			"mcpx": map[string]any{"policy": map[string]any{"destructive": "allow"}}},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
	e.MustOK("refresh")
	mcpURL := serveHTTP(t, e)
	hostRoots := []map[string]any{{"uri": "file:///host/src"}, {"uri": "file:///host/docs"}}
	const tool = "test_input_required_result_multiple_inputs"
	const want = "Name: Grace; Greeting: Pipes hum in the dark; Roots: 2"
	answer := map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}

	r := host2026(t, e, map[string]any{"url": mcpURL + "/conf", "headers": keyHeader(t, e),
		"elicit": answer, "sample": sampleAnswer, "roots": hostRoots, "calls": []map[string]any{{"name": tool}}})
	if res := r.Results[0]; res.Result == nil || res.Result.IsError || res.Result.text() != want {
		t.Errorf("2026 host: %+v %+v", res.Result, res.Error)
	}
	if r.ToolCalls != 2 || len(r.Elicitations) != 1 || len(r.Samples) != 1 || r.RootsAsked != 1 {
		t.Errorf("2026 host: %d tools/call, asked %d, %d, %d times; want one round of three", r.ToolCalls, len(r.Elicitations), len(r.Samples), r.RootsAsked)
	}
	r2 := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "elicit": answer, "sample": sampleAnswer, "roots": hostRoots,
		"steps": []map[string]any{{"op": "call", "name": "conf." + tool}}})
	if got := decodeAs[toolResult](t, r2.step(t, 0)); got.IsError || got.text() != want {
		t.Errorf("2025 host: %+v", got)
	}
	if len(r2.Elicitations) != 1 || len(r2.Samples) != 1 || r2.RootsAsked != 1 {
		t.Errorf("2025 host asked %d, %d, %d times", len(r2.Elicitations), len(r2.Samples), r2.RootsAsked)
	}
}
