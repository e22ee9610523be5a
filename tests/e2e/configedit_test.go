package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config add / remove round trip: the written file is trusted, the server
// callable at once, comments of an existing file kept, names not
// overwritten without --force.
func TestConfigAddRemove(t *testing.T) {
	e := NewEnv(t)
	cfg := e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), "{\n  // mine\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"true\"} // kept\n  }\n}\n")
	e.MustOK("config", "add", "fx", "--env", "NS=fx", "--", fixtureBin)
	if r := e.MustOK("call", "fx.env", "name=NS"); r.Stdout != "fx" {
		t.Fatalf("added server: %s", r)
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "// mine") || !strings.Contains(string(b), "// kept") {
		t.Errorf("comments lost:\n%s", b)
	}
	if r := e.Mcpx("config", "add", "fx", "--", "/bin/false"); r.Code != 2 || !strings.Contains(r.Stderr, "--force") {
		t.Fatalf("overwrite without --force: %s", r)
	}
	e.MustOK("config", "add", "--force", "fx", "--env", "NS=again", "--", fixtureBin)
	if r := e.MustOK("call", "fx.env", "name=NS"); r.Stdout != "again" {
		t.Fatalf("replaced server: %s", r)
	}
	e.MustOK("config", "add", "web", "--url", "https://example.invalid/mcp", "--header", "Authorization=Bearer ${WEB_TOKEN}")
	var doc struct {
		Servers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"servers"`
	}
	e.JSON(&doc, "config")
	if w := doc.Servers["web"]; w.URL != "https://example.invalid/mcp" || w.Headers["Authorization"] != "Bearer ${WEB_TOKEN}" {
		t.Errorf("remote server: %+v", doc.Servers)
	}
	e.MustOK("config", "remove", "fx")
	e.MustOK("config", "remove", "web")
	b, _ = os.ReadFile(cfg)
	if string(b) != "{\n  // mine\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"true\"} // kept\n  }\n}\n" {
		t.Errorf("remove did not restore the file:\n%s", b)
	}
	if r := e.Mcpx("call", "fx.env", "name=NS"); r.Code != 2 {
		t.Fatalf("removed server still callable: %s", r)
	}

	// --user writes the user file.
	e.MustOK("config", "add", "--user", "u", "--", fixtureBin)
	if _, err := os.Stat(filepath.Join(e.Home, ".config", "mcpx", "config.json")); err != nil {
		t.Fatal(err)
	}
	e.MustOK("call", "u.echo", "text=user")
	e.MustOK("config", "remove", "--user", "u")
}

// An edit of a file the user had not trusted does not trust it.
func TestConfigAddKeepsUntrusted(t *testing.T) {
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Work, ".mcpx.json"), fmt.Sprintf(`{"mcpServers": {"evil": {"command": %s}}}`, jsonString(fixtureBin)))
	r := e.MustOK("config", "add", "fx", "--", fixtureBin)
	if !strings.Contains(r.Stderr, "mcpx trust") {
		t.Errorf("no trust note: %s", r)
	}
	if r := e.Mcpx("call", "evil.echo", "text=x"); r.Code != 4 {
		t.Fatalf("config add trusted an untrusted file: %s", r)
	}
}

// config import copies a host's servers into mcpx's own file.
func TestConfigImport(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Home, ".cursor", "mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "cm": {"command": %s, "env": {"MEMORY_FILE_PATH": "${userHome}/cm.jsonl"}},
  "bad": {"url": "ftp://nope"}
}}`, jsonString(mem)))
	r := e.MustOK("config", "import", "cursor")
	if !strings.Contains(r.Stdout, "cm") || !strings.Contains(r.Stderr, "bad") {
		t.Fatalf("import: %s", r)
	}
	b, err := os.ReadFile(filepath.Join(e.Work, ".mcpx.json"))
	if err != nil || !strings.Contains(string(b), "${HOME}/cm.jsonl") {
		t.Fatalf("imported file: %v\n%s", err, b)
	}
	// The cursor file itself goes; the imported copy serves.
	if err := os.Remove(filepath.Join(e.Home, ".cursor", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	e.MustOK("call", "cm.read_graph")
	if r := e.Mcpx("config", "import", "cursr"); r.Code != 2 || !strings.Contains(r.Stderr, "cursor") {
		t.Errorf("unknown host: %s", r)
	}
}

// config add, import and remove keep every comment and the file's layout:
// the comment on the last entry's line stays on it, a CRLF file stays
// CRLF, and removing what was added gives back the file byte for byte.
func TestConfigEditsKeepCommentsAndLayout(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	e := NewEnv(t)
	orig := strings.ReplaceAll("// before\n{\n  \"mcpServers\": {\n    // about keep\n    \"keep\": {\"command\": \"true\" /* inside */}, // kept\n    \"last\": {\"command\": \"true\"} // last\n    // after the entries\n  }\n}\n// after\n", "\n", "\r\n")
	cfg := e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), orig)
	e.WriteUntrusted(filepath.Join(e.Home, ".cursor", "mcp.json"), fmt.Sprintf(`{"mcpServers": {"c1": {"command": %s}, "c2": {"command": %s}}}`, jsonString(mem), jsonString(mem)))
	e.MustOK("config", "add", "fx", "--", fixtureBin)
	e.MustOK("config", "import", "cursor")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"// before\r\n", "    // about keep\r\n", `"keep": {"command": "true" /* inside */}, // kept` + "\r\n",
		`"last": {"command": "true"}, // last` + "\r\n", "    // after the entries\r\n  }\r\n}\r\n// after\r\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the edited file lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("a line of the CRLF file ends in a bare LF:\n%q", got)
	}
	if i, j, k := strings.Index(got, `"fx"`), strings.Index(got, `"c1"`), strings.Index(got, "// after the entries"); !(strings.Index(got, "// last") < i && i < j && j < k) {
		t.Errorf("new entries are not after the last one and before the comments that end the map:\n%s", got)
	}
	e.MustOK("call", "fx.echo", "text=x")
	for _, name := range []string{"c2", "fx", "c1"} {
		e.MustOK("config", "remove", name)
	}
	if b, _ := os.ReadFile(cfg); string(b) != orig {
		t.Errorf("removing what was added did not give the file back:\n%q\nwant\n%q", b, orig)
	}
}
