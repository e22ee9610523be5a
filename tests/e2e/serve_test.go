package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// The `mcpx serve` tests drive it with a real MCP client: the official
// TypeScript SDK (tests/npm) through tests/serve/client.mjs.

type serveReport struct {
	Steps []struct {
		Op     string          `json:"op"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    any             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	} `json:"steps"`
	Notifications []string          `json:"notifications"`
	Elicitations  []string          `json:"elicitations"`
	Samples       []json.RawMessage `json:"samples"`
	RootsAsked    int               `json:"rootsAsked"`
	Progress      []struct {
		Progress    float64 `json:"progress"`
		Total       float64 `json:"total"`
		Message     string  `json:"message"`
		Step        int     `json:"step"`
		AfterResult bool    `json:"afterResult"`
	} `json:"progress"`
	// WireProgress is Progress as read from the transport (client.mjs).
	WireProgress []struct {
		Progress    float64 `json:"progress"`
		Step        int     `json:"step"`
		AfterResult bool    `json:"afterResult"`
	} `json:"wireProgress"`
	Logs []struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	} `json:"logs"`
	ConnectError string `json:"connectError"`
}

// step returns step i's result, failing the test on an error.
func (r serveReport) step(t *testing.T, i int) json.RawMessage {
	t.Helper()
	s := r.Steps[i]
	if s.Error != nil {
		t.Fatalf("step %d (%s) failed: %v %s", i, s.Op, s.Error.Code, s.Error.Message)
	}
	return s.Result
}

// sdkClient runs tests/serve/client.mjs with plan and returns its report.
func sdkClient(t *testing.T, e *Env, plan map[string]any) serveReport {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	npmBin(t, "mcp-server-everything") // the SDK is installed with the servers
	if plan["transport"] == nil {
		plan["transport"] = "stdio"
		plan["command"] = mcpxBin
		env := map[string]string{}
		for _, kv := range e.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		plan["env"] = env
		if plan["cwd"] == nil {
			plan["cwd"] = e.Work
		}
	}
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(repoRoot, "tests", "serve", "client.mjs"), string(b))
	cmd.Env = e.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var r serveReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs report: %v\n%s\nstderr: %s", err, out.String(), errb.String())
	}
	if r.ConnectError != "" {
		t.Fatalf("client.mjs could not connect: %s\nstderr: %s", r.ConnectError, errb.String())
	}
	if len(r.Steps) != len(plan["steps"].([]map[string]any)) {
		t.Fatalf("client.mjs ran %d steps of %d", len(r.Steps), len(plan["steps"].([]map[string]any)))
	}
	return r
}

// serveConfig writes a config with server-everything and the built-in demo
// server (whose delete_note is destructive), reads both, and stops the
// daemon so that nothing runs.
func serveConfig(t *testing.T, e *Env) {
	t.Helper()
	everything := npmBin(t, "mcp-server-everything")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "everything": {"command": %s, "args": ["stdio"]},
  "demo": {"command": %s, "args": ["demo-server"]}
}}`, jsonString(everything), jsonString(mcpxBin)))
	var rr api.RefreshResponse
	e.JSON(&rr, "refresh")
	for _, n := range rr.Namespaces {
		if n.State != api.StateCached {
			t.Fatalf("refresh: %+v", rr)
		}
	}
	if len(rr.Namespaces) != 2 {
		t.Fatalf("refresh: %+v", rr)
	}
	e.MustOK("stop")
	testkit.Eventually(t, 30*time.Second, "the daemon and its servers to exit", func() bool { return len(running(e)) == 0 })
}

// running lists the marked processes that are a daemon or an MCP server.
func running(e *Env) []string {
	var out []string
	for _, c := range e.MarkedCmdlines() {
		if strings.Contains(c, " daemon") || strings.Contains(c, "demo-server") || strings.Contains(c, "mcp-server-everything") {
			out = append(out, c)
		}
	}
	return out
}

type toolList struct {
	Tools []toolInfo `json:"tools"`
}

type toolInfo struct {
	Name         string          `json:"name"`
	Annotations  map[string]any  `json:"annotations"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func decodeAs[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

var discoverySteps = []map[string]any{
	{"op": "listTools"}, {"op": "listResources"}, {"op": "listResourceTemplates"}, {"op": "listPrompts"},
}

// checkDiscovery checks steps 0-3 of a report of discoverySteps.
func checkDiscovery(t *testing.T, r serveReport) {
	t.Helper()
	tools := decodeAs[toolList](t, r.step(t, 0))
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
		if tl.Name == "demo.delete_note" && tl.Annotations["destructiveHint"] != true {
			t.Errorf("annotations not kept: %+v", tl)
		}
		if len(tl.InputSchema) == 0 {
			t.Errorf("%s has no input schema", tl.Name)
		}
	}
	for _, want := range []string{"everything.echo", "demo.echo", "demo.delete_note", "everything.get-structured-content"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, tl := range tools.Tools {
		if tl.Name == "everything.get-structured-content" && len(tl.OutputSchema) == 0 {
			t.Errorf("output schema of %s not kept", tl.Name)
		}
	}
	if res := string(r.step(t, 1)); !strings.Contains(res, `"mcpx://everything/demo://resource/static/document/`) {
		t.Errorf("resources/list: %s", res)
	}
	if res := string(r.step(t, 2)); !strings.Contains(res, `mcpx://everything/demo://resource/dynamic/text/{resourceId}`) {
		t.Errorf("resources/templates/list: %s", res)
	}
	if res := string(r.step(t, 3)); !strings.Contains(res, `"everything.args-prompt"`) {
		t.Errorf("prompts/list: %s", res)
	}
}

// callSteps: echo; a note added; the destructive delete refused; the note
// still there; a tool of no namespace.
var callSteps = []map[string]any{
	{"op": "call", "name": "everything.echo", "arguments": map[string]any{"message": "hello over MCP"}},
	{"op": "call", "name": "demo.add_note", "arguments": map[string]any{"name": "keep", "text": "still here"}},
	{"op": "call", "name": "demo.delete_note", "arguments": map[string]any{"name": "keep"}},
	{"op": "call", "name": "demo.get_note", "arguments": map[string]any{"name": "keep"}},
	{"op": "call", "name": "echo", "arguments": map[string]any{"message": "x"}},
	{"op": "readResource", "uri": "mcpx://everything/demo://resource/dynamic/text/7"},
	{"op": "getPrompt", "name": "everything.args-prompt", "arguments": map[string]any{"city": "Paris"}},
}

func checkCalls(t *testing.T, r serveReport, base int) {
	t.Helper()
	if got := decodeAs[toolResult](t, r.step(t, base)); got.IsError || !strings.Contains(got.text(), "hello over MCP") {
		t.Errorf("everything.echo: %+v", got)
	}
	if got := decodeAs[toolResult](t, r.step(t, base+1)); got.IsError {
		t.Errorf("demo.add_note: %+v", got)
	}
	del := decodeAs[toolResult](t, r.step(t, base+2))
	if !del.IsError || !strings.Contains(del.text(), "destructive") || !strings.Contains(del.text(), "elicitation") {
		t.Errorf("demo.delete_note without elicitation: %+v", del)
	}
	if got := decodeAs[toolResult](t, r.step(t, base+3)); got.IsError || !strings.Contains(got.text(), "still here") {
		t.Errorf("the note was deleted although the call was refused: %+v", got)
	}
	if s := r.Steps[base+4]; s.Error == nil {
		t.Errorf("a tool of no namespace answered %s", s.Result)
	}
	if res := string(r.step(t, base+5)); !strings.Contains(res, "Resource 7") || !strings.Contains(res, "mcpx://everything/demo://resource/dynamic/text/7") {
		t.Errorf("resources/read: %s", res)
	}
	if res := string(r.step(t, base+6)); !strings.Contains(res, "Paris") {
		t.Errorf("prompts/get: %s", res)
	}
}

func TestServeStdio(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)

	// Listing comes from the cache: the daemon stays stopped, no server starts.
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": discoverySteps})
	checkDiscovery(t, r)
	if procs := running(e); len(procs) != 0 {
		t.Fatalf("listing started processes: %v", procs)
	}

	r = sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": callSteps})
	checkCalls(t, r, 0)

	// A host that supports elicitation is asked, and the call runs once
	// the user accepts.
	r = sdkClient(t, e, map[string]any{"args": []string{"serve"}, "elicit": "accept", "steps": []map[string]any{
		{"op": "call", "name": "demo.delete_note", "arguments": map[string]any{"name": "keep"}},
		{"op": "call", "name": "demo.get_note", "arguments": map[string]any{"name": "keep"}},
		{"op": "call", "name": "everything.simulate-research-query", "arguments": map[string]any{"topic": "owls"}, "progress": true},
	}})
	// Asked for progress, serve reports the task's status messages.
	if len(r.Progress) < 2 || r.Progress[len(r.Progress)-1].Progress <= r.Progress[0].Progress || r.Progress[0].Message == "" {
		t.Errorf("progress of the task tool: %+v", r.Progress)
	}
	// A tool whose task support is required runs as a task in the daemon;
	// the host sees a plain call.
	if got := decodeAs[toolResult](t, r.step(t, 2)); got.IsError || !strings.Contains(got.text(), "Research Report: owls") {
		t.Errorf("task tool through serve: %+v", got)
	}
	if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || len(r.Elicitations) != 1 || !strings.Contains(r.Elicitations[0], "demo.delete_note") {
		t.Errorf("confirmed delete: %+v, elicitations %v", got, r.Elicitations)
	}
	if got := decodeAs[toolResult](t, r.step(t, 1)); !got.IsError {
		t.Errorf("the note survived a confirmed delete: %+v", got)
	}
}

func TestServeSearchMode(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	r := sdkClient(t, e, map[string]any{"args": []string{"serve", "--expose=search"}, "steps": []map[string]any{
		{"op": "listTools"},
		{"op": "call", "name": "call_tool", "arguments": map[string]any{"name": "everything.echo", "arguments": map[string]any{"message": "found and called"}}},
		{"op": "call", "name": "describe_tool", "arguments": map[string]any{"name": "everything.echo"}},
		{"op": "call", "name": "search_tools", "arguments": map[string]any{"query": "echo"}},
		{"op": "call", "name": "call_tool", "arguments": map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}},
		{"op": "call", "name": "call_tool", "arguments": map[string]any{"name": "demo.delete_note", "arguments": map[string]any{"name": "x"}}},
	}})
	tools := decodeAs[toolList](t, r.step(t, 0))
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "search_tools,describe_tool,call_tool" && len(names) != 3 {
		t.Fatalf("--expose=search lists %v", names)
	}
	for _, want := range []string{"search_tools", "describe_tool", "call_tool"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("--expose=search lacks %s: %v", want, names)
		}
	}
	if got := decodeAs[toolResult](t, r.step(t, 1)); got.IsError || !strings.Contains(got.text(), "found and called") {
		t.Errorf("call_tool everything.echo: %+v", got)
	}
	if got := decodeAs[toolResult](t, r.step(t, 2)); !strings.Contains(got.text(), `"inputSchema"`) || !strings.Contains(got.text(), `"message"`) {
		t.Errorf("describe_tool: %+v", got)
	}
	// (everything announces list_changed as it starts, and the daemon
	// rereads its list meanwhile: demo.echo is the hit that is always there.)
	if got := decodeAs[toolResult](t, r.step(t, 3)); !strings.Contains(got.text(), "demo.echo — Echo the given text") {
		t.Errorf("search_tools echo: %+v", got)
	}
	if s := r.Steps[4]; s.Error == nil {
		t.Errorf("call_tool of a name with no namespace answered %s", s.Result)
	}
	if got := decodeAs[toolResult](t, r.step(t, 5)); !got.IsError || !strings.Contains(got.text(), "destructive") {
		t.Errorf("call_tool demo.delete_note: %+v", got)
	}
}

// --ns limits what is served (one namespace alone under its server's own
// names); -C picks the directory whose config is served.
func TestServeNamespacesAndDirectory(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	r := sdkClient(t, e, map[string]any{"args": []string{"-C", e.Work, "serve", "--ns", "demo,everything"}, "cwd": e.Root, "steps": []map[string]any{
		{"op": "listTools"},
	}})
	for _, want := range []string{"demo.echo", "everything.echo"} {
		if !slices.ContainsFunc(decodeAs[toolList](t, r.step(t, 0)).Tools, func(tl toolInfo) bool { return tl.Name == want }) {
			t.Errorf("--ns demo,everything lacks %s", want)
		}
	}
	r = sdkClient(t, e, map[string]any{"args": []string{"-C", e.Work, "serve", "--ns", "demo"}, "cwd": e.Root, "steps": []map[string]any{
		{"op": "listTools"}, {"op": "listPrompts"}, {"op": "call", "name": "echo", "arguments": map[string]any{"text": "own name"}},
	}})
	tools := decodeAs[toolList](t, r.step(t, 0))
	if len(tools.Tools) == 0 {
		t.Fatal("--ns demo serves no tools")
	}
	for _, tl := range tools.Tools {
		if strings.Contains(tl.Name, ".") {
			t.Errorf("--ns demo serves %s, want the server's own names", tl.Name)
		}
	}
	if res := string(r.step(t, 1)); strings.Contains(res, "args-prompt") {
		t.Errorf("--ns demo serves everything's prompts: %s", res)
	}
	if got := decodeAs[toolResult](t, r.step(t, 2)); got.IsError || !strings.Contains(got.text(), "own name") {
		t.Errorf("echo under its own name: %+v", got)
	}
	if r := e.Mcpx("serve", "--ns", "nope"); r.Code != 2 || !strings.Contains(r.Stderr, "nope") {
		t.Errorf("--ns of an unknown namespace: %s", r)
	}
	if r := e.Mcpx("serve", "--ns", "everythnig"); r.Code != 2 || !strings.Contains(r.Stderr, "did you mean everything?") {
		t.Errorf("--ns of a misspelt namespace: %s", r)
	}
	// Under --json, a failure to start is the error document on stdout,
	// as for every command.
	for _, c := range []struct {
		args             []string
		code, suggestion string
	}{
		{[]string{"--json", "serve", "--ns", "everythnig"}, "unknown_namespace", "everything"},
		{[]string{"serve", "--json", "--expose", "some"}, "usage", ""},
	} {
		r := e.Mcpx(c.args...)
		var doc struct {
			Error struct {
				Code, Message, Suggestion string
				Exit                      int
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 2 || doc.Error.Exit != 2 ||
			doc.Error.Code != c.code || doc.Error.Suggestion != c.suggestion || doc.Error.Message == "" {
			t.Errorf("%v: want exit 2 and a %s error document (%v)\n%s", c.args, c.code, err, r)
		}
	}
}

func TestServeHTTP(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)

	if r := e.Mcpx("serve", "--http", "0.0.0.0:0"); r.Code != 2 || !strings.Contains(r.Stderr, "loopback") {
		t.Errorf("non-loopback --http: %s", r)
	}

	addr := freeAddr(t)
	startServe(t, e, "--http", addr)
	key := serveKeyOf(t, e)
	// The key as a bearer token.
	r := sdkClient(t, e, map[string]any{"transport": "http", "url": "http://" + addr + "/mcp", "headers": keyHeader(t, e), "steps": discoverySteps})
	checkDiscovery(t, r)
	if procs := running(e); len(procs) != 0 {
		t.Fatalf("listing started processes: %v", procs)
	}
	// The key in the URL.
	r = sdkClient(t, e, map[string]any{"transport": "http", "url": "http://" + addr + "/mcp?key=" + key, "steps": callSteps})
	checkCalls(t, r, 0)

	// Bad input over HTTP: a body that is not JSON is a JSON-RPC parse
	// error, and the server keeps serving.
	resp, err := http.Post("http://"+addr+"/mcp?key="+key, "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "-32700") {
		t.Errorf("malformed JSON over HTTP: %d %s", resp.StatusCode, body)
	}
	// A page that rebinds its own name to 127.0.0.1 is refused by Host.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp?key="+key, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = "attacker.example"
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a foreign Host header got %d, want 403", resp.StatusCode)
		}
	}
	r = sdkClient(t, e, map[string]any{"transport": "http", "url": "http://" + addr + "/mcp", "headers": keyHeader(t, e), "steps": []map[string]any{{"op": "listTools"}}})
	if len(decodeAs[toolList](t, r.step(t, 0)).Tools) == 0 {
		t.Error("no tools after bad input")
	}
}

// serveKeyOf is e's serve key, made by the first `serve --http`.
func serveKeyOf(t *testing.T, e *Env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Home, ".local", "state", "mcpx", "serve.key"))
	if err != nil {
		t.Fatalf("the serve key: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// keyHeader carries e's serve key as a bearer token.
func keyHeader(t *testing.T, e *Env) map[string]string {
	return map[string]string{"Authorization": "Bearer " + serveKeyOf(t, e)}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startServe starts `mcpx serve args…` in the background, waiting for an
// HTTP address to accept; it is stopped at cleanup.
// serveHTTP starts `mcpx serve --http` on a free loopback port and
// returns the URL of its aggregate endpoint (".../mcp"; a namespace's is
// that plus "/NS").
func serveHTTP(t *testing.T, e *Env) string {
	t.Helper()
	addr := freeAddr(t)
	startServe(t, e, "--http", addr)
	return "http://" + addr + "/mcp"
}

func startServe(t *testing.T, e *Env, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(mcpxBin, append([]string{"serve"}, args...)...)
	cmd.Dir = e.Work
	cmd.Env = e.Environ()
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve stderr: %s", stderr.String())
		}
	})
	for i, a := range args {
		if a == "--http" {
			addr := args[i+1]
			testkit.Eventually(t, 30*time.Second, "serve listening on "+addr, func() bool {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					c.Close()
				}
				return err == nil
			})
		}
	}
	return cmd
}

func TestServeListChanged(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	config := filepath.Join(e.Work, ".mcp.json")
	everything := npmBin(t, "mcp-server-everything")
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{
		{"op": "listTools"},
		{"op": "writeFile", "path": config, "content": fmt.Sprintf(`{"mcpServers": {
  "everything": {"command": %s, "args": ["stdio"]},
  "demo": {"command": %s, "args": ["demo-server"]},
  "fixture": {"command": %s}
}}`, jsonString(everything), jsonString(mcpxBin), jsonString(fixtureBin))},
		{"op": "waitNotification", "method": "notifications/tools/list_changed", "timeoutMs": 60000},
		{"op": "waitNotification", "method": "notifications/prompts/list_changed", "timeoutMs": 60000},
		{"op": "waitNotification", "method": "notifications/resources/list_changed", "timeoutMs": 60000},
	}})
	for i := range r.Steps {
		r.step(t, i)
	}
	// The edited project file is untrusted until the user says so; once
	// trusted, the new server's tools follow as soon as it has been read.
	e.MustOK("trust", config)
	testkit.Eventually(t, 90*time.Second, "fixture tools served", func() bool {
		r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{{"op": "listTools"}}})
		for _, tl := range decodeAs[toolList](t, r.step(t, 0)).Tools {
			if tl.Name == "fixture.echo" {
				return true
			}
		}
		return false
	})

	// An upstream server's own list_changed reaches the host too: the
	// daemon rereads the list, serve sees the cache change.
	r = sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{
		{"op": "call", "name": "fixture.add_tool", "arguments": map[string]any{"name": "born_late"}},
		{"op": "waitNotification", "method": "notifications/tools/list_changed", "timeoutMs": 60000},
	}})
	if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError {
		t.Fatalf("fixture.add_tool: %+v", got)
	}
	r.step(t, 1)
	testkit.Eventually(t, 90*time.Second, "fixture.born_late served", func() bool {
		// The tool exists in the instance that added it; the daemon's
		// reread of the list is what serve shows.
		r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{{"op": "listTools"}}})
		for _, tl := range decodeAs[toolList](t, r.step(t, 0)).Tools {
			if tl.Name == "fixture.born_late" {
				return true
			}
		}
		return false
	})
}

// TestServeBadInput speaks raw JSON-RPC to `mcpx serve` on stdio: malformed
// JSON, an unknown method and a tool of no namespace each get an MCP error,
// and the server keeps answering.
func TestServeBadInput(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpxBin, "serve")
	cmd.Dir = e.Work
	cmd.Env = e.Environ()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	send := func(s string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("serve wrote %q: %v", lines.Text(), err)
			}
			if _, ok := m["id"]; ok {
				return m
			}
		}
		t.Fatalf("serve closed stdout: %v", lines.Err())
		return nil
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if m := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`); errCode(m) != -32700 {
		t.Errorf("malformed JSON: %v", m)
	}
	if m := send(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`); errCode(m) != -32601 {
		t.Errorf("unknown method: %v", m)
	}
	if m := send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`); errCode(m) == 0 {
		t.Errorf("tool of no namespace: %v", m)
	}
	m := send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"demo.echo","arguments":{"text":"still serving"}}}`)
	if b, _ := json.Marshal(m); !strings.Contains(string(b), "still serving") {
		t.Errorf("after bad input: %s", b)
	}
}

// forwardSteps: a long-running tool called with a progress token (its
// progress must reach the host before the result), then, with the host's
// log level at debug, server-everything's simulated logging switched on and
// a call that lasts past its next log line (no progress token: log
// messages are forwarded anyway).
var forwardSteps = []map[string]any{
	{"op": "call", "name": "everything.trigger-long-running-operation", "arguments": map[string]any{"duration": 2, "steps": 4}, "progress": true},
	{"op": "request", "method": "logging/setLevel", "params": map[string]any{"level": "debug"}},
	{"op": "call", "name": "everything.toggle-simulated-logging"},
	{"op": "call", "name": "everything.trigger-long-running-operation", "arguments": map[string]any{"duration": 8, "steps": 2}},
}

func checkForwarded(t *testing.T, r serveReport) {
	t.Helper()
	if got := decodeAs[toolResult](t, r.step(t, 0)); got.IsError || !strings.Contains(got.text(), "Long running operation completed") {
		t.Errorf("trigger-long-running-operation: %+v", got)
	}
	var seen []float64
	for _, p := range r.Progress {
		if p.Step != 0 {
			t.Errorf("progress for step %d, which did not ask for it: %+v", p.Step, p)
			continue
		}
		if p.AfterResult {
			t.Errorf("progress after the result: %+v", p)
		}
		if p.Total != 4 {
			t.Errorf("progress total %v, want 4 (the server's): %+v", p.Total, p)
		}
		if len(seen) > 0 && p.Progress <= seen[len(seen)-1] {
			t.Errorf("progress went from %v to %v", seen[len(seen)-1], p.Progress)
		}
		seen = append(seen, p.Progress)
	}
	if len(seen) < 2 {
		t.Errorf("%d progress notifications before the result, want at least 2: %+v", len(seen), r.Progress)
	}
	for i := 1; i < len(forwardSteps); i++ {
		r.step(t, i)
	}
	if len(r.Logs) == 0 {
		t.Fatalf("no log message forwarded (notifications %v)", r.Notifications)
	}
	for _, l := range r.Logs {
		var text string
		// server-everything's lines name their level ("Info-level message").
		if l.Level == "" || l.Logger != "everything" || json.Unmarshal(l.Data, &text) != nil || !strings.Contains(strings.ToLower(text), l.Level) {
			t.Errorf("forwarded log: %+v %s", l, l.Data)
		}
	}
}

// TestServeForwardsProgressAndLogs: an ordinary tools/call streams from
// the daemon; the server's progress and log notifications reach the host,
// over stdio and over HTTP.
func TestServeForwardsProgressAndLogs(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	t.Run("stdio", func(t *testing.T) {
		checkForwarded(t, sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": forwardSteps}))
	})
	// A fresh server-everything for HTTP: the toggle would switch the
	// running one's logging off.
	e.MustOK("stop")
	testkit.Eventually(t, 30*time.Second, "the daemon and its servers to exit", func() bool { return len(running(e)) == 0 })
	t.Run("http", func(t *testing.T) {
		mcpURL := serveHTTP(t, e)
		checkForwarded(t, sdkClient(t, e, map[string]any{"transport": "http", "url": mcpURL, "headers": keyHeader(t, e), "steps": forwardSteps}))
	})
}
