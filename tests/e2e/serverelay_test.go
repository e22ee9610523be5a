package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// host2026 runs tests/serve/host2026.mjs (the official TypeScript SDK v2
// as a 2026-07-28 host) with plan and returns its report.
func host2026(t *testing.T, e *Env, plan map[string]any) host2026Report {
	t.Helper()
	tsServer(t) // skips where tests/npm is not installed
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(repoRoot, "tests", "serve", "host2026.mjs"), string(b))
	cmd.Env = e.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("host2026.mjs: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var r host2026Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("host2026.mjs report: %v\n%s\nstderr: %s", err, out.String(), errb.String())
	}
	if r.ConnectError != "" {
		t.Fatalf("host2026.mjs could not connect: %s\nstderr: %s", r.ConnectError, errb.String())
	}
	return r
}

type host2026Report struct {
	ProtocolVersion string `json:"protocolVersion"`
	Results         []struct {
		Result *toolResult `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"results"`
	Elicitations []json.RawMessage `json:"elicitations"`
	ConnectError string            `json:"connectError"`
}

// relayAnswers are what the hosts answer the servers' forms with, and
// what the tools answer back (the content, keys sorted).
var (
	profileAnswer = map[string]any{"action": "accept", "content": map[string]any{"name": "Grace", "age": 50, "colour": "blue"}}
	profileEcho   = `accept {"age":50,"colour":"blue","name":"Grace"}`
	bookAnswer    = map[string]any{"action": "accept", "content": map[string]any{"city": "Porto", "nights": 2}}
	bookEcho      = `accept {"city":"Porto","nights":2}`
)

// A server's elicitation reaches the host through serve and the host's
// answer reaches the server, for both generations of server (the Go
// fixture and the official TypeScript SDK, each restricted to 2026-07-28
// or 2025-11-25) and both generations of host: the TypeScript SDK 1.x
// (2025-11-25: elicitation/create on its session) over stdio and HTTP,
// and the TypeScript SDK v2 (2026-07-28: input_required results, the
// call sent again with the answer) over HTTP. A host that declares no
// elicitation has the question declined for it.
func TestServeRelaysElicitation(t *testing.T) {
	e := NewEnv(t)
	elicitConfig(t, e)
	e.MustOK("refresh")
	calls := []struct{ ns, tool, want string }{
		{"fx", "ask_profile", profileEcho},
		{"fl", "ask_profile", profileEcho},
		{"tm", "book", bookEcho},
		{"tl", "book", bookEcho},
	}
	answer := func(tool string) map[string]any {
		if tool == "book" {
			return bookAnswer
		}
		return profileAnswer
	}
	addr := freeAddr(t)
	startServe(t, e, "--http", addr)
	base := "http://" + addr + "/mcp"

	for _, c := range calls {
		t.Run("2025-stdio/"+c.ns, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "elicit": answer(c.tool), "steps": []map[string]any{
				{"op": "call", "name": c.ns + "." + c.tool},
			}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || got.text() != c.want {
				t.Errorf("%s.%s: %+v (elicitations %v)", c.ns, c.tool, got, r.Elicitations)
			}
			if len(r.Elicitations) != 1 {
				t.Errorf("the host was asked %d times: %v", len(r.Elicitations), r.Elicitations)
			}
		})
		t.Run("2025-http/"+c.ns, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"elicit": answer(c.tool), "steps": []map[string]any{{"op": "call", "name": c.tool}}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || got.text() != c.want {
				t.Errorf("%s: %+v (elicitations %v)", c.tool, got, r.Elicitations)
			}
		})
		t.Run("2026-http/"+c.ns, func(t *testing.T) {
			r := host2026(t, e, map[string]any{"url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"elicit": answer(c.tool), "calls": []map[string]any{{"name": c.tool}}})
			if r.ProtocolVersion != "2026-07-28" {
				t.Errorf("the host speaks %q with serve", r.ProtocolVersion)
			}
			if res := r.Results[0]; res.Result == nil || res.Result.IsError || res.Result.text() != c.want {
				t.Errorf("%s: %+v %+v (elicitations %s)", c.tool, res.Result, res.Error, r.Elicitations)
			}
			if len(r.Elicitations) != 1 {
				t.Errorf("the host was asked %d times", len(r.Elicitations))
			}
		})
	}

	// Without the capability: declined for the host, on both generations.
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{{"op": "call", "name": "fx.ask_profile"}}})
	if got := decodeAs[toolResult](t, r.step(t, 0)); got.text() != "decline" {
		t.Errorf("2025 host without elicitation: %+v", got)
	}
	r2 := host2026(t, e, map[string]any{"url": base + "/fl", "headers": keyHeader(t, e), "calls": []map[string]any{{"name": "ask_profile"}}})
	if res := r2.Results[0]; res.Result == nil || res.Result.text() != "decline" {
		t.Errorf("2026 host without elicitation: %+v %+v", res.Result, res.Error)
	}
}
