package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// serveErrorsConfig writes a config with the conformance fixture (conf)
// and the TypeScript server restricted to each generation (tm 2026-07-28,
// tl 2025-11-25), reads it, and starts `mcpx serve --http` in front of it:
// its env and the base URL of its endpoints.
func serveErrorsConfig(t *testing.T) (e *Env, base string) {
	t.Helper()
	e = NewEnv(t)
	node, args := tsServer(t)
	cfg := map[string]any{"mcpServers": map[string]any{
		"conf": map[string]any{"command": fixtureBin, "args": []string{"--conformance"},
			"mcpx": map[string]any{"policy": map[string]any{"destructive": "allow"}}},
		"tm": map[string]any{"command": node, "args": args, "env": map[string]string{"TS_PROTOCOL": "modern"}},
		"tl": map[string]any{"command": node, "args": args, "env": map[string]string{"TS_PROTOCOL": "legacy"}},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
	e.MustOK("refresh")
	return e, serveHTTP(t, e)
}

// post2026 sends one 2026-07-28 request (no capabilities declared) to a
// serve endpoint, with its key, as the conformance suite does.
func post2026(t *testing.T, e *Env, url, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	return testkit.Post2026(t, url, method, params, map[string]any{}, keyHeader(t, e))
}

// rpcErr reads an error object: its code and data.
func rpcErr(msg map[string]any) (code float64, data map[string]any) {
	e, _ := msg["error"].(map[string]any)
	code, _ = e["code"].(float64)
	data, _ = e["data"].(map[string]any)
	return code, data
}

// A server's JSON-RPC error reaches the host through serve as that error,
// not as an isError result: the MissingRequiredClientCapabilityError of a
// server whose host did not declare sampling (-32021, naming it; HTTP 400
// for a 2026-07-28 host), and a resource not found, which carries the URI
// the host asked for (data.uri; SEP-2164) in the host's generation's code
// (-32602 from 2026-07-28 on, -32002 before), whether serve does not know
// the URI or the server does not find it. A host that declares sampling
// has the tool run.
func TestServeGivesServersJSONRPCErrors(t *testing.T) {
	e, base := serveErrorsConfig(t)

	t.Run("2026-http-raw", func(t *testing.T) {
		status, msg := post2026(t, e, base+"/conf", "tools/call",
			map[string]any{"name": "test_missing_capability", "arguments": map[string]any{}})
		code, data := rpcErr(msg)
		required, _ := data["requiredCapabilities"].(map[string]any)
		if status != http.StatusBadRequest || code != -32021 || required["sampling"] == nil || msg["id"] != float64(7) {
			t.Errorf("test_missing_capability: HTTP %d %v; want 400, -32021 naming sampling", status, msg)
		}
		for _, c := range []struct{ ns, uri string }{{"conf", "test://nonexistent"}, {"tm", "note://missing"}} {
			status, msg = post2026(t, e, base+"/"+c.ns, "resources/read", map[string]any{"uri": c.uri})
			if code, data := rpcErr(msg); status != http.StatusBadRequest || code != -32602 || data["uri"] != c.uri {
				t.Errorf("read %s on %s: HTTP %d %v; want 400, -32602 with data.uri", c.uri, c.ns, status, msg)
			}
		}
	})
	t.Run("2026-sdk", func(t *testing.T) {
		r := host2026(t, e, map[string]any{"url": base + "/tm", "headers": keyHeader(t, e),
			"calls": []map[string]any{{"op": "read", "uri": "note://missing"}, {"op": "read", "uri": "note://here"}}})
		if res := r.Results[0]; res.Error == nil || res.Error.Code != float64(-32602) || !strings.Contains(string(res.Error.Data), `"uri":"note://missing"`) {
			t.Errorf("read note://missing: %+v %+v", res.Result, res.Error)
		}
		if raw := r.raw(t, 1); !strings.Contains(string(raw), `"text":"note here"`) {
			t.Errorf("read note://here: %s", raw)
		}
		r = host2026(t, e, map[string]any{"url": base + "/conf", "headers": keyHeader(t, e), "sample": sampleAnswer,
			"calls": []map[string]any{{"name": "test_missing_capability"}}})
		if res := r.Results[0]; res.Result == nil || res.Result.IsError || res.Result.text() != "Success" {
			t.Errorf("test_missing_capability for a host that samples: %+v %+v", res.Result, res.Error)
		}
	})
	t.Run("2025-stdio", func(t *testing.T) {
		r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{
			{"op": "call", "name": "conf.test_missing_capability"},
			{"op": "readResource", "uri": "mcpx://tl/note://missing"},
			{"op": "readResource", "uri": "mcpx://conf/test://nonexistent"},
			{"op": "readResource", "uri": "test://nonexistent"},
		}})
		if s := r.Steps[0]; s.Error == nil || s.Error.Code != float64(-32021) || !strings.Contains(string(s.Error.Data), `"sampling"`) {
			t.Errorf("call without sampling: %+v %s", s.Error, s.Result)
		}
		for i, uri := range []string{"mcpx://tl/note://missing", "mcpx://conf/test://nonexistent", "test://nonexistent"} {
			s := r.Steps[i+1]
			var data map[string]any
			if s.Error != nil {
				_ = json.Unmarshal(s.Error.Data, &data)
			}
			if s.Error == nil || s.Error.Code != float64(-32002) || data["uri"] != uri {
				t.Errorf("read %s: %+v %s; want -32002 with data.uri", uri, s.Error, s.Result)
			}
		}
	})
}

// What a server asks while it renders a prompt or reads a resource
// reaches the host, as during a call: for both generations of server (the
// TypeScript server's brief and note://ask, each restricted to 2026-07-28
// or 2025-11-25; the conformance fixture's prompt) and both generations
// of host (a 2025-11-25 host is asked elicitation/create on its session,
// over stdio on the aggregate and over HTTP under the server's own names;
// a 2026-07-28 host gets an input_required result and sends the request
// again with its answer). A host that declares no elicitation has a
// 2025-11-25 server's question declined for it, and a 2026-07-28 server,
// told so, answers -32021.
func TestServeRelaysQuestionsOfPromptsAndReads(t *testing.T) {
	e, base := serveErrorsConfig(t)
	answer := map[string]any{"action": "accept", "content": map[string]any{"owner": "Ada"}}
	const brief, note = `brief for accept {\"owner\":\"Ada\"}`, `note of accept {\"owner\":\"Ada\"}`

	for _, ns := range []string{"tm", "tl"} {
		t.Run("2025-stdio/"+ns, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "elicit": answer, "steps": []map[string]any{
				{"op": "getPrompt", "name": ns + ".brief"},
				{"op": "readResource", "uri": "mcpx://" + ns + "/note://ask"},
			}})
			if got := string(r.step(t, 0)); !strings.Contains(got, brief) {
				t.Errorf("prompt: %s", got)
			}
			if got := string(r.step(t, 1)); !strings.Contains(got, note) || !strings.Contains(got, `"uri":"mcpx://`+ns+`/note://ask"`) {
				t.Errorf("read: %s", got)
			}
			if len(r.Elicitations) != 2 {
				t.Errorf("the host was asked %d times: %v", len(r.Elicitations), r.Elicitations)
			}
		})
		t.Run("2025-http/"+ns, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/" + ns, "headers": keyHeader(t, e), "elicit": answer,
				"steps": []map[string]any{{"op": "getPrompt", "name": "brief"}, {"op": "readResource", "uri": "note://ask"}}})
			if got := string(r.step(t, 0)); !strings.Contains(got, brief) {
				t.Errorf("prompt: %s", got)
			}
			if got := string(r.step(t, 1)); !strings.Contains(got, note) {
				t.Errorf("read: %s", got)
			}
		})
		t.Run("2026-http/"+ns, func(t *testing.T) {
			r := host2026(t, e, map[string]any{"url": base + "/" + ns, "headers": keyHeader(t, e), "elicit": answer,
				"calls": []map[string]any{{"op": "prompt", "name": "brief"}, {"op": "read", "uri": "note://ask"}}})
			if got := string(r.raw(t, 0)); !strings.Contains(got, brief) {
				t.Errorf("prompt: %s %+v", got, r.Results[0].Error)
			}
			if got := string(r.raw(t, 1)); !strings.Contains(got, note) {
				t.Errorf("read: %s %+v", got, r.Results[1].Error)
			}
			if len(r.Elicitations) != 2 {
				t.Errorf("the host was asked %d times: %s", len(r.Elicitations), r.Elicitations)
			}
		})
	}
	t.Run("2026-http/conf", func(t *testing.T) {
		r := host2026(t, e, map[string]any{"url": base + "/conf", "headers": keyHeader(t, e),
			"elicit": map[string]any{"action": "accept", "content": map[string]any{"context": "the release"}},
			"calls":  []map[string]any{{"op": "prompt", "name": "test_input_required_result_prompt"}}})
		if got := string(r.raw(t, 0)); !strings.Contains(got, "Prompt with context: the release") {
			t.Errorf("prompt: %s %+v", got, r.Results[0].Error)
		}
	})
	t.Run("no-elicitation", func(t *testing.T) {
		// A 2026-07-28 server is told the host does not elicit, and says
		// so; a 2025-11-25 one asks anyway and is declined.
		r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{
			{"op": "getPrompt", "name": "tm.brief"}, {"op": "getPrompt", "name": "tl.brief"}}})
		if s := r.Steps[0]; s.Error == nil || s.Error.Code != float64(-32021) {
			t.Errorf("2025 host without elicitation, 2026 server: %+v %s", s.Error, s.Result)
		}
		if got := string(r.step(t, 1)); !strings.Contains(got, "brief for decline") {
			t.Errorf("2025 host without elicitation, 2025 server: %s", got)
		}
		r2 := host2026(t, e, map[string]any{"url": base + "/tl", "headers": keyHeader(t, e), "calls": []map[string]any{{"op": "read", "uri": "note://ask"}}})
		if got := string(r2.raw(t, 0)); !strings.Contains(got, "note of decline") {
			t.Errorf("2026 host without elicitation: %s %+v", got, r2.Results[0].Error)
		}
	})
}
