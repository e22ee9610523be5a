package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
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
	r.out = out.Bytes()
	return r
}

type host2026Report struct {
	ProtocolVersion string `json:"protocolVersion"`
	Results         []struct {
		Result *toolResult `json:"result"`
		Error  *struct {
			Code    any             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	} `json:"results"`
	Elicitations []json.RawMessage `json:"elicitations"`
	Samples      []json.RawMessage `json:"samples"`
	RootsAsked   int               `json:"rootsAsked"`
	ToolCalls    int               `json:"toolCalls"`
	Progress     []struct {
		Progress    float64 `json:"progress"`
		Total       float64 `json:"total"`
		Call        int     `json:"call"`
		AfterResult bool    `json:"afterResult"`
	} `json:"progress"`
	ConnectError string `json:"connectError"`
	out          []byte // the report as printed
}

// raw is the result of the report's call i as the host got it (a
// prompt's, a read's), or nil.
func (r host2026Report) raw(t *testing.T, i int) json.RawMessage {
	t.Helper()
	var all struct {
		Results []struct {
			Result json.RawMessage `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(r.out, &all); err != nil || i >= len(all.Results) {
		t.Fatalf("report has no result %d: %v", i, err)
	}
	return all.Results[i].Result
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
		{"fx", "ask_url", "accept"}, // URL mode
		{"tl", "verify", "accept"},
	}
	answer := func(tool string) map[string]any {
		switch tool {
		case "book":
			return bookAnswer
		case "ask_url", "verify":
			return map[string]any{"action": "accept"}
		}
		return profileAnswer
	}
	base := serveHTTP(t, e)

	for _, c := range calls {
		name := c.ns + "." + c.tool
		t.Run("2025-stdio/"+name, func(t *testing.T) {
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
		t.Run("2025-http/"+name, func(t *testing.T) {
			r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/" + c.ns, "headers": keyHeader(t, e),
				"elicit": answer(c.tool), "steps": []map[string]any{{"op": "call", "name": c.tool}}})
			if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || got.text() != c.want {
				t.Errorf("%s: %+v (elicitations %v)", c.tool, got, r.Elicitations)
			}
		})
		t.Run("2026-http/"+name, func(t *testing.T) {
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

// A host's completion/complete reaches the server whose prompt or
// resource template it names, and the server's values come back: on the
// aggregate (stdio, NS.NAME and mcpx://NS/ names) and on a namespace's
// own endpoint (HTTP, the server's own names).
func TestServeRelaysCompletion(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	complete := func(ref map[string]any, arg, value string, context map[string]any) map[string]any {
		params := map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}}
		if context != nil {
			params["context"] = map[string]any{"arguments": context}
		}
		return map[string]any{"op": "request", "method": "completion/complete", "params": params}
	}
	steps := func(prompt, template string) []map[string]any {
		return []map[string]any{
			complete(map[string]any{"type": "ref/prompt", "name": prompt}, "name", "", map[string]any{"department": "Marketing"}),
			complete(map[string]any{"type": "ref/prompt", "name": prompt}, "department", "S", nil),
			complete(map[string]any{"type": "ref/resource", "uri": template}, "resourceId", "42", nil),
			complete(map[string]any{"type": "ref/prompt", "name": "no-such-prompt"}, "name", "", nil),
		}
	}
	type completion struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	check := func(t *testing.T, r serveReport) {
		t.Helper()
		want := [][]string{{"Grace", "Henry", "Iris"}, {"Sales", "Support"}, {"42"}}
		for i, w := range want {
			got := decodeAs[completion](t, r.step(t, i)).Completion.Values
			if strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("completion %d: %v, want %v", i, got, w)
			}
		}
		if r.Steps[3].Error == nil {
			t.Errorf("a prompt nobody serves was completed: %s", r.Steps[3].Result)
		}
	}
	t.Run("aggregate-stdio", func(t *testing.T) {
		check(t, sdkClient(t, e, map[string]any{"args": []string{"serve"},
			"steps": steps("everything.completable-prompt", "mcpx://everything/demo://resource/dynamic/text/{resourceId}")}))
	})
	t.Run("own-http", func(t *testing.T) {
		mcpURL := serveHTTP(t, e)
		check(t, sdkClient(t, e, map[string]any{"transport": "http", "url": mcpURL + "/everything", "headers": keyHeader(t, e),
			"steps": steps("completable-prompt", "demo://resource/dynamic/text/{resourceId}")}))
	})
}

// progressCalls is how many calls the progress test makes one after the
// other, each with progressSteps notifications 10 ms apart
// (server-everything's trigger-long-running-operation).
const (
	progressCalls = 4
	progressSteps = 100
)

// checkEveryProgress checks that each call's progress arrived whole: every
// notification of 1..progressSteps, in order, all before its result.
// progress lists (call, progress, afterResult) as the host saw them.
func checkEveryProgress(t *testing.T, progress [][3]float64) {
	t.Helper()
	next := make([]float64, progressCalls)
	for _, p := range progress {
		call, value, after := int(p[0]), p[1], p[2] != 0
		if call < 0 || call >= progressCalls {
			t.Errorf("progress for call %d", call)
			continue
		}
		if after {
			t.Errorf("call %d: progress %v after the result", call, value)
		}
		if value != next[call]+1 {
			t.Errorf("call %d: progress %v after %v", call, value, next[call])
		}
		next[call] = value
	}
	for call, last := range next {
		if last != progressSteps {
			t.Errorf("call %d: the last progress before the result was %v of %d", call, last, progressSteps)
		}
	}
}

// Every progress notification of a call reaches the host, in order, all
// before the call's result: 4 calls of 100 notifications each, over stdio
// (the aggregate), HTTP (a namespace's own endpoint) and HTTP to a
// 2026-07-28 host.
func TestServeProgressEveryNotification(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	args := map[string]any{"duration": progressSteps / 100, "steps": progressSteps}
	var steps, own, calls []map[string]any
	for range progressCalls {
		steps = append(steps, map[string]any{"op": "call", "name": "everything.trigger-long-running-operation", "arguments": args, "progress": true})
		own = append(own, map[string]any{"op": "call", "name": "trigger-long-running-operation", "arguments": args, "progress": true})
		calls = append(calls, map[string]any{"name": "trigger-long-running-operation", "arguments": args, "progress": true})
	}
	fromSDK := func(t *testing.T, r serveReport) [][3]float64 {
		var out [][3]float64
		for i := range steps {
			if got := decodeAs[toolResult](t, r.step(t, i)); got.IsError {
				t.Fatalf("call %d: %+v", i, got)
			}
		}
		// As serve wrote them: the SDK 1.x may drop the last one itself
		// (client.mjs).
		for _, p := range r.WireProgress {
			after := 0.0
			if p.AfterResult {
				after = 1
			}
			out = append(out, [3]float64{float64(p.Step), p.Progress, after})
		}
		return out
	}
	t.Run("stdio", func(t *testing.T) {
		checkEveryProgress(t, fromSDK(t, sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": steps})))
	})
	url := serveHTTP(t, e) + "/everything"
	t.Run("http", func(t *testing.T) {
		checkEveryProgress(t, fromSDK(t, sdkClient(t, e, map[string]any{"transport": "http", "url": url, "headers": keyHeader(t, e), "steps": own})))
	})
	t.Run("http-2026", func(t *testing.T) {
		r := host2026(t, e, map[string]any{"url": url, "headers": keyHeader(t, e), "calls": calls})
		if r.ProtocolVersion != "2026-07-28" {
			t.Errorf("the host speaks %q with serve", r.ProtocolVersion)
		}
		for i, res := range r.Results {
			if res.Result == nil || res.Result.IsError {
				t.Fatalf("call %d: %+v %+v", i, res.Result, res.Error)
			}
		}
		var out [][3]float64
		for _, p := range r.Progress {
			after := 0.0
			if p.AfterResult {
				after = 1
			}
			out = append(out, [3]float64{float64(p.Call), p.Progress, after})
		}
		checkEveryProgress(t, out)
	})
}

// A destructive call from a 2026-07-28 host is confirmed by asking the
// host (an input_required result, the call sent again with the answer):
// it runs only on accept with confirm: true.
func TestServeConfirmsFor2026Host(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	url := serveHTTP(t, e) + "/demo"
	note := func(name string) []map[string]any {
		return []map[string]any{
			{"name": "add_note", "arguments": map[string]any{"name": name, "text": "kept"}},
			{"name": "delete_note", "arguments": map[string]any{"name": name}},
			{"name": "get_note", "arguments": map[string]any{"name": name}},
		}
	}
	// Declined: the note stays.
	r := host2026(t, e, map[string]any{"url": url, "headers": keyHeader(t, e), "elicit": map[string]any{"action": "decline"}, "calls": note("a")})
	if len(r.Elicitations) != 1 {
		t.Errorf("the host was asked %d times", len(r.Elicitations))
	}
	if del := r.Results[1].Result; del == nil || !del.IsError || !strings.Contains(del.text(), "decline") {
		t.Errorf("declined delete_note: %+v %+v", del, r.Results[1].Error)
	}
	if got := r.Results[2].Result; got == nil || got.IsError || !strings.Contains(got.text(), "kept") {
		t.Errorf("the note went although the delete was declined: %+v", got)
	}
	// Confirmed: it goes.
	r = host2026(t, e, map[string]any{"url": url, "headers": keyHeader(t, e),
		"elicit": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, "calls": note("b")})
	if del := r.Results[1].Result; del == nil || del.IsError {
		t.Errorf("confirmed delete_note: %+v %+v", del, r.Results[1].Error)
	}
	if got := r.Results[2].Result; got != nil && !got.IsError && strings.Contains(got.text(), "kept") {
		t.Errorf("the note is still there after a confirmed delete: %+v", got)
	}
}
