package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Redaction hides secrets, not paths (issue 18, row 8). With the very
// common "MEMORY_FILE_PATH": "${HOME}/m.jsonl" in a server's env, every
// message used to read "[redacted]/proj/.mcp.json is not trusted yet". The
// home directory, and an env value that is an existing path, now show as
// they are — in the trust refusal and in a failing server's stderr — while
// a token in a header or a URL query stays hidden in errors and the log.
func TestRedactionHidesSecretsNotPaths(t *testing.T) {
	e := NewEnv(t)
	const token = "tok-5e4d3c2b1a09"
	e.Set("TOKEN", token)
	proj := filepath.Join(e.Home, "proj")
	data := filepath.Join(proj, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	e.Set("DATA_DIR", data)
	// mem fails at start, saying where its file is, as server-memory would.
	cfg := e.WriteUntrusted(filepath.Join(proj, ".mcp.json"), `{"mcpServers": {
  "mem": {"command": "sh", "args": ["-c", "echo \"cannot open $MEMORY_FILE_PATH in $DATA_DIR\" >&2; exit 1"],
          "env": {"MEMORY_FILE_PATH": "${HOME}/m.jsonl", "DATA_DIR": "${DATA_DIR}"}},
  "remote": {"url": "http://127.0.0.1:1/mcp?key=${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
}}`)

	// Untrusted: the refusal names the file as it is.
	r := e.McpxIn(proj, "call", "mem.anything")
	if r.Code != 4 || !strings.Contains(r.Stderr, "mcpx trust "+cfg) || strings.Contains(r.Stderr, "[redacted]") {
		t.Fatalf("the trust refusal should name %s unredacted (exit 4):\n%s", cfg, r)
	}
	if r := e.McpxIn(proj, "ls"); !strings.Contains(r.Stdout, cfg) || strings.Contains(r.Stdout+r.Stderr, "[redacted]") {
		t.Errorf("ls should name %s unredacted:\n%s", cfg, r)
	}

	if r := e.McpxIn(proj, "trust", cfg); r.Code != 0 {
		t.Fatalf("%s", r)
	}
	// The server's own words about its paths reach the user intact.
	want := "cannot open " + e.Home + "/m.jsonl in " + data
	r = e.McpxIn(proj, "call", "mem.anything")
	if r.Code != 3 || !strings.Contains(r.Stderr, want) {
		t.Errorf("a failing server's stderr should read %q:\n%s", want, r)
	}
	// The token in the header and the query is still hidden.
	outputs := []Result{e.McpxIn(proj, "call", "remote.anything"), e.McpxIn(proj, "--json", "call", "remote.anything"),
		e.McpxIn(proj, "refresh"), e.McpxIn(proj, "--json", "ls")}
	shown := false
	for _, r := range outputs {
		if strings.Contains(r.Stdout+r.Stderr, token) {
			t.Errorf("the token shows:\n%s", r)
		}
		shown = shown || strings.Contains(r.Stdout+r.Stderr, "127.0.0.1:1")
	}
	if !shown {
		t.Errorf("no output names the remote server's address, so nothing was tested:\n%v", outputs)
	}
	logs := e.McpxIn(proj, "logs")
	if logs.Code != 0 || strings.Contains(logs.Stdout, token) {
		t.Errorf("the daemon's log shows the token:\n%s", logs)
	}
	if !strings.Contains(logs.Stdout, want) {
		t.Errorf("the daemon's log should hold the server's stderr %q unredacted:\n%s", want, logs)
	}
}
