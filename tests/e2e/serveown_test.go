package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// Servers under their own names (issue #19, Deliver 4): /mcp/NS over HTTP
// and `serve --ns NS` on stdio serve one namespace with its server's own
// tool, prompt and resource names and URIs; /mcp keeps NS.TOOL, and its
// URIs, in lists, results and resources/read alike, are mcpx://NS/….

// ownSteps: server-everything's lists and a tool, a prompt and a resource
// under their own names, an embedded resource read back by its URI, and
// demo's destructive tool, refused as on /mcp.
var ownSteps = []map[string]any{
	{"op": "listTools"},
	{"op": "listPrompts"},
	{"op": "listResources"},
	{"op": "listResourceTemplates"},
	{"op": "call", "name": "echo", "arguments": map[string]any{"message": "under its own name"}},
	{"op": "getPrompt", "name": "args-prompt", "arguments": map[string]any{"city": "Paris"}},
	{"op": "readResource", "uri": "demo://resource/dynamic/text/7"},
	{"op": "call", "name": "get-resource-reference", "arguments": map[string]any{"resourceId": 3}},
	{"op": "readResource", "uri": "demo://resource/dynamic/text/3"},
	{"op": "call", "name": "get-resource-links", "arguments": map[string]any{"count": 1}},
}

type promptList struct {
	Prompts []struct {
		Name string `json:"name"`
	} `json:"prompts"`
}

type resourceList struct {
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
	} `json:"resourceTemplates"`
}

type richResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		URI      string `json:"uri"`
		Resource struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	} `json:"content"`
	Contents []struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"contents"`
	IsError bool `json:"isError"`
}

// checkOwnNames checks a report of ownSteps against server-everything's own
// names.
func checkOwnNames(t *testing.T, r serveReport) {
	t.Helper()
	tools := decodeAs[toolList](t, r.step(t, 0))
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
		if strings.HasPrefix(tl.Name, "everything.") {
			t.Errorf("tool %s is renamed", tl.Name)
		}
	}
	for _, want := range []string{"echo", "get-structured-content", "get-resource-reference", "trigger-long-running-operation"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if names["add_note"] {
		t.Error("another namespace's tool (demo's add_note) is served")
	}
	prompts := decodeAs[promptList](t, r.step(t, 1))
	var pnames []string
	for _, p := range prompts.Prompts {
		pnames = append(pnames, p.Name)
	}
	if !strings.Contains(","+strings.Join(pnames, ",")+",", ",args-prompt,") {
		t.Errorf("prompts/list: %v", pnames)
	}
	res := decodeAs[resourceList](t, r.step(t, 2))
	if len(res.Resources) == 0 {
		t.Error("resources/list is empty")
	}
	for _, x := range res.Resources {
		if !strings.HasPrefix(x.URI, "demo://resource/") {
			t.Errorf("resource URI %s is not the server's own", x.URI)
		}
	}
	tpl := decodeAs[resourceList](t, r.step(t, 3))
	found := false
	for _, x := range tpl.ResourceTemplates {
		found = found || x.URITemplate == "demo://resource/dynamic/text/{resourceId}"
	}
	if !found {
		t.Errorf("resources/templates/list: %s", r.step(t, 3))
	}
	if got := decodeAs[toolResult](t, r.step(t, 4)); got.IsError || !strings.Contains(got.text(), "under its own name") {
		t.Errorf("echo: %+v", got)
	}
	if got := string(r.step(t, 5)); !strings.Contains(got, "Paris") {
		t.Errorf("args-prompt: %s", got)
	}
	read := decodeAs[richResult](t, r.step(t, 6))
	if len(read.Contents) != 1 || read.Contents[0].URI != "demo://resource/dynamic/text/7" || !strings.Contains(read.Contents[0].Text, "Resource 7") {
		t.Errorf("resources/read: %s", r.step(t, 6))
	}
	embedded := embeddedURI(decodeAs[richResult](t, r.step(t, 7)))
	if embedded != "demo://resource/dynamic/text/3" {
		t.Errorf("embedded resource URI %q, want the server's own: %s", embedded, r.step(t, 7))
	}
	if back := decodeAs[richResult](t, r.step(t, 8)); len(back.Contents) != 1 || back.Contents[0].URI != embedded {
		t.Errorf("reading the embedded resource back: %s", r.step(t, 8))
	}
	links := decodeAs[richResult](t, r.step(t, 9))
	for _, c := range links.Content {
		if c.Type == "resource_link" && !strings.HasPrefix(c.URI, "demo://resource/") {
			t.Errorf("resource link %s is not the server's own URI", c.URI)
		}
	}
}

func TestServeOwnNamesHTTP(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	base := serveHTTP(t, e)
	checkOwnNames(t, sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/everything", "headers": keyHeader(t, e), "steps": ownSteps}))

	// Policy and consent as on /mcp: demo's destructive tool is not run
	// for a host that cannot be asked.
	r := sdkClient(t, e, map[string]any{"transport": "http", "url": base + "/demo", "headers": keyHeader(t, e), "steps": []map[string]any{
		{"op": "call", "name": "add_note", "arguments": map[string]any{"name": "keep", "text": "still here"}},
		{"op": "call", "name": "delete_note", "arguments": map[string]any{"name": "keep"}},
		{"op": "call", "name": "get_note", "arguments": map[string]any{"name": "keep"}},
		{"op": "call", "name": "demo.echo", "arguments": map[string]any{"text": "x"}},
	}})
	if del := decodeAs[toolResult](t, r.step(t, 1)); !del.IsError || !strings.Contains(del.text(), "destructive") {
		t.Errorf("delete_note on /mcp/demo: %+v", del)
	}
	if got := decodeAs[toolResult](t, r.step(t, 2)); got.IsError || !strings.Contains(got.text(), "still here") {
		t.Errorf("the note went although the delete was refused: %+v", got)
	}
	if r.Steps[3].Error == nil {
		t.Errorf("/mcp/demo answered a tool by its aggregate name: %s", r.Steps[3].Result)
	}

	// The aggregate: embedded resources and links come under mcpx://NS/,
	// which its resources/read takes.
	r = sdkClient(t, e, map[string]any{"transport": "http", "url": base, "headers": keyHeader(t, e), "steps": []map[string]any{
		{"op": "call", "name": "everything.get-resource-reference", "arguments": map[string]any{"resourceId": 3}},
		{"op": "readResource", "uri": "mcpx://everything/demo://resource/dynamic/text/3"},
		{"op": "call", "name": "everything.get-resource-links", "arguments": map[string]any{"count": 1}},
	}})
	embedded := embeddedURI(decodeAs[richResult](t, r.step(t, 0)))
	if embedded != "mcpx://everything/demo://resource/dynamic/text/3" {
		t.Errorf("the aggregate's embedded resource URI is %q: %s", embedded, r.step(t, 0))
	}
	if back := decodeAs[richResult](t, r.step(t, 1)); len(back.Contents) != 1 || back.Contents[0].URI != embedded {
		t.Errorf("reading it back: %s", r.step(t, 1))
	}
	for _, c := range decodeAs[richResult](t, r.step(t, 2)).Content {
		if c.Type == "resource_link" && !strings.HasPrefix(c.URI, "mcpx://everything/") {
			t.Errorf("the aggregate's resource link %s", c.URI)
		}
	}

	// A namespace that is not served: one line naming those that are.
	req, _ := http.NewRequest(http.MethodPost, base+"/nope", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+serveKeyOf(t, e))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"nope"`) || !strings.Contains(string(body), "demo, everything") {
		t.Errorf("/mcp/nope: %d %s", resp.StatusCode, body)
	}
}

func TestServeOwnNamesStdio(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	checkOwnNames(t, sdkClient(t, e, map[string]any{"args": []string{"serve", "--ns", "everything"}, "steps": ownSteps}))
}

// A host's notifications/cancelled reaches the server: the call is
// cancelled upstream, no result is written for it, and serve keeps
// serving.
func TestServeCancelReachesTheServer(t *testing.T) {
	e := NewEnv(t)
	started := filepath.Join(e.Root, "started.log")
	cancelled := filepath.Join(e.Root, "cancelled.log")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s,
  "env": {"FIXTURE_STARTED_LOG": %s, "FIXTURE_CANCEL_LOG": %s}}}}`, jsonString(fixtureBin), jsonString(started), jsonString(cancelled)))
	e.MustOK("refresh")
	for _, args := range [][]string{{"serve"}, {"serve", "--ns", "fx"}} {
		name := "fx.slow"
		if len(args) > 1 {
			name = "slow"
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			os.Remove(started)
			os.Remove(cancelled)
			h := startStdioHost(t, e, args...)
			h.send(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"` + name + `","arguments":{"seconds":600}}}`)
			testkit.Eventually(t, 60*time.Second, "the slow call to start in the server", func() bool {
				b, _ := os.ReadFile(started)
				return strings.Contains(string(b), "started 600")
			})
			h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"the user gave up"}}`)
			testkit.Eventually(t, 60*time.Second, "the server to see the call cancelled", func() bool {
				b, _ := os.ReadFile(cancelled)
				return strings.Contains(string(b), "cancelled 600")
			})
			h.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
			if m := h.answer(t); fmt.Sprint(m["id"]) != "9" {
				t.Fatalf("after the cancel serve answered %v, want the ping (no answer to a cancelled call)", m)
			}
		})
	}
}

// stdioHost is a host speaking raw JSON-RPC to `mcpx serve` on stdio,
// initialized.
type stdioHost struct {
	stdin io.WriteCloser
	lines *bufio.Scanner
	t     *testing.T
}

func startStdioHost(t *testing.T, e *Env, args ...string) *stdioHost {
	t.Helper()
	cmd := exec.Command(mcpxBin, args...)
	cmd.Dir, cmd.Env = e.Work, e.Environ()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	h := &stdioHost{stdin: stdin, lines: bufio.NewScanner(stdout), t: t}
	h.lines.Buffer(make([]byte, 1<<20), 16<<20)
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := h.answer(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

func (h *stdioHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// answer reads the next message that carries an id (skipping
// notifications).
func (h *stdioHost) answer(t *testing.T) map[string]any {
	t.Helper()
	for h.lines.Scan() {
		var m map[string]any
		if err := json.Unmarshal(h.lines.Bytes(), &m); err != nil {
			t.Fatalf("serve wrote %q: %v", h.lines.Text(), err)
		}
		if _, ok := m["id"]; ok {
			return m
		}
	}
	t.Fatalf("serve closed stdout: %v", h.lines.Err())
	return nil
}

// embeddedURI is the URI of the (last) embedded resource of a tool result.
func embeddedURI(res richResult) string {
	uri := ""
	for _, c := range res.Content {
		if c.Type == "resource" {
			uri = c.Resource.URI
		}
	}
	return uri
}
