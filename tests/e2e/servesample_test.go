package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// sampleAnswer is what the hosts answer a server's sampling request with.
var sampleAnswer = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Pipes hum in the dark"},
	"model": "host-model", "stopReason": "endTurn"}

// A server's sampling request reaches the host through serve and the
// host's answer reaches the server, for both generations of server (the
// Go fixture restricted to 2026-07-28 or 2025-11-25, and server-everything,
// which offers its sampling tool only to a client that declares sampling)
// and both generations of host (the TypeScript SDK 1.x on stdio and HTTP,
// the SDK v2 with input_required rounds). A host that refuses, or that
// declared no sampling, has the call fail with the reason.
func TestServeRelaysSampling(t *testing.T) {
	e := NewEnv(t)
	cfg := map[string]any{"mcpServers": map[string]any{
		"fx":         map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "modern"}},
		"fl":         map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "legacy"}},
		"everything": map[string]any{"command": npmBin(t, "mcp-server-everything")},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
	e.MustOK("refresh")
	calls := []struct {
		ns, tool string
		args     map[string]any
	}{
		{"fx", "ask_sample", nil},
		{"fl", "ask_sample", nil},
		{"everything", "trigger-sampling-request", map[string]any{"prompt": "a haiku about pipes"}},
	}
	const want = "Pipes hum in the dark"
	base := serveHTTP(t, e)

	for _, c := range calls {
		name := c.ns + "." + c.tool
		t.Run("2025-stdio/"+name, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "sample": sampleAnswer, "steps": []map[string]any{
				{"op": "call", "name": name, "arguments": c.args},
			}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || !strings.Contains(got.text(), want) {
				t.Errorf("%s: %+v", name, got)
			}
			if len(r.Samples) != 1 || !strings.Contains(string(r.Samples[0]), "pipes") {
				t.Errorf("the host was asked %d times: %s", len(r.Samples), r.Samples)
			}
		})
		t.Run("2025-http/"+name, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"sample": sampleAnswer, "steps": []map[string]any{{"op": "call", "name": c.tool, "arguments": c.args}}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || !strings.Contains(got.text(), want) {
				t.Errorf("%s: %+v", c.tool, got)
			}
		})
		t.Run("2026-http/"+name, func(t *testing.T) {
			r := host2026(t, e, map[string]any{"url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"sample": sampleAnswer, "calls": []map[string]any{{"name": c.tool, "arguments": c.args}}})
			if res := r.Results[0]; res.Result == nil || res.Result.IsError || !strings.Contains(res.Result.text(), want) {
				t.Errorf("%s: %+v %+v (samples %s)", c.tool, res.Result, res.Error, r.Samples)
			}
			if len(r.Samples) != 1 {
				t.Errorf("the host was asked %d times: %s", len(r.Samples), r.Samples)
			}
		})
	}

	// A host that refuses: the server hears it, the call fails: mcpx ends
	// the call of a 2026-07-28 server (an isError result), a 2025-11-25
	// server answers it with a JSON-RPC error, which reaches the host.
	for _, ns := range []string{"fx", "fl"} {
		r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "sample": "refuse", "steps": []map[string]any{
			{"op": "call", "name": ns + ".ask_sample"},
		}})
		s := r.Steps[0]
		switch {
		case ns == "fl" && (s.Error == nil || !strings.Contains(s.Error.Message, "refused to sample")):
			t.Errorf("%s, the host refusing: %+v %s", ns, s.Error, s.Result)
		case ns == "fx":
			if got := decodeAs[toolResult](t, r.step(t, 0)); !got.IsError || !strings.Contains(got.text(), "refused to sample") {
				t.Errorf("%s, the host refusing: %+v", ns, got)
			}
		}
	}
	// A host without sampling: refused for it, as for `mcpx call`.
	// (The 2025-11-25 server answers the refusal with a JSON-RPC error.)
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{{"op": "call", "name": "fl.ask_sample"}}})
	if s := r.Steps[0]; s.Error == nil || !strings.Contains(s.Error.Message, "does not sample") || len(r.Samples) != 0 {
		t.Errorf("2025 host without sampling: %+v %s", s.Error, s.Result)
	}
	// A 2026-07-28 server that asks anyway needed what the host did not
	// declare: MissingRequiredClientCapabilityError, naming sampling.
	r2 := host2026(t, e, map[string]any{"url": base + "/fx", "headers": keyHeader(t, e), "calls": []map[string]any{{"name": "ask_sample"}}})
	if res := r2.Results[0]; res.Error == nil || res.Error.Code != float64(-32021) || !strings.Contains(string(res.Error.Data), `"sampling"`) {
		t.Errorf("2026 host without sampling: %+v %+v", res.Result, res.Error)
	}
}
