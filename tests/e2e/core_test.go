package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// The README's first command on a machine with no MCP config anywhere.
func TestReadmeCommandPrintsHello(t *testing.T) {
	e := NewEnv(t)
	r := e.MustOK("call", "demo.echo", "text=hello")
	// Text exactly as sent: no newline is added when stdout is not a
	// terminal.
	if r.Stdout != "hello" {
		t.Fatalf("stdout %q, want \"hello\"\n%s", r.Stdout, r)
	}
	// The demo server stayed warm: its note survives between two calls.
	e.MustOK("call", "demo.add_note", "name=n1", "text=kept")
	if r := e.MustOK("call", "demo.get_note", "name=n1"); !strings.Contains(r.Stdout, "kept") {
		t.Fatalf("note not kept by the warm demo server:\n%s", r)
	}
}

// npmConfig writes a config with the three pinned npm servers and returns
// the directory the filesystem server may read.
func npmConfig(t *testing.T, e *Env) string {
	t.Helper()
	everything := npmBin(t, "mcp-server-everything")
	filesystem := npmBin(t, "mcp-server-filesystem")
	memory := npmBin(t, "mcp-server-memory")
	shared := filepath.Join(e.Root, "files")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	e.WriteFile(filepath.Join(shared, "greeting.txt"), "hello from the filesystem server\n")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{
  // the three pinned npm servers (tests/npm/package-lock.json)
  "mcpServers": {
    "everything": {"command": %s, "args": ["stdio"]},
    "filesystem": {"command": %s, "args": [%s]},
    "memory": {"command": %s, "env": {"MEMORY_FILE_PATH": %s}},
  }
}`, jsonString(everything), jsonString(filesystem), jsonString(shared), jsonString(memory),
		jsonString(filepath.Join(e.Root, "memory.jsonl"))))
	return shared
}

func TestNpmServers(t *testing.T) {
	e := NewEnv(t)
	shared := npmConfig(t, e)

	// Never fetched: ls answers at once, every server unread.
	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	if got := names(ns); got != "everything,filesystem,memory" {
		t.Fatalf("namespaces %q", got)
	}
	e.MustOK("refresh")
	e.JSON(&ns, "ls")
	for _, n := range ns.Namespaces {
		if n.State != api.StateCached || n.Tools == 0 {
			t.Fatalf("after refresh %s is %s with %d tools (%s)", n.Name, n.State, n.Tools, n.Error)
		}
	}

	// search by a word of a description
	var found api.SearchResponse
	e.JSON(&found, "search", "sum")
	if len(found.Results) == 0 || found.Results[0].Namespace+"."+found.Results[0].Name != "everything.get-sum" {
		t.Fatalf("search sum: %+v", found.Results)
	}

	// schema prints the input schema
	r := e.MustOK("schema", "everything.get-sum")
	if !strings.Contains(r.Stdout, `"a"`) || !strings.Contains(r.Stdout, `"b"`) {
		t.Fatalf("schema lacks properties a and b:\n%s", r)
	}

	if r := e.MustOK("call", "everything.echo", "message=hi there"); !strings.Contains(r.Stdout, "hi there") {
		t.Fatalf("echo:\n%s", r)
	}
	if r := e.MustOK("call", "everything.get-sum", "a=2", "b=3"); !strings.Contains(r.Stdout, "5") {
		t.Fatalf("get-sum:\n%s", r)
	}
	r = e.MustOK("call", "filesystem.read_text_file", "path="+filepath.Join(shared, "greeting.txt"))
	if !strings.Contains(r.Stdout, "hello from the filesystem server") {
		t.Fatalf("read_text_file:\n%s", r)
	}

	// memory: create in one call, read back in the next: the server stayed
	// warm (its memory file is only written, never the source of truth
	// between processes of one test).
	e.MustOK("call", "memory.create_entities", `{"entities":[{"name":"mcpx","entityType":"tool","observations":["keeps servers warm"]}]}`)
	r = e.MustOK("call", "memory.read_graph")
	if !strings.Contains(r.Stdout, "keeps servers warm") {
		t.Fatalf("read_graph after create_entities:\n%s", r)
	}

	// After stop, discovery answers from the cache and starts no server.
	e.MustOK("stop")
	testkit.Eventually(t, 60*time.Second, "every server process to exit after stop", func() bool {
		return len(serverProcesses(e)) == 0
	})
	e.JSON(&ns, "ls")
	if got := names(ns); got != "everything,filesystem,memory" {
		t.Fatalf("namespaces after stop %q", got)
	}
	for _, n := range ns.Namespaces {
		if n.State != api.StateCached || n.Live != 0 {
			t.Fatalf("after stop %s: state %s live %d", n.Name, n.State, n.Live)
		}
	}
	e.JSON(&found, "search", "sum")
	if len(found.Results) == 0 {
		t.Fatal("search after stop found nothing")
	}
	if r := e.MustOK("schema", "memory.create_entities"); !strings.Contains(r.Stdout, "entities") {
		t.Fatalf("schema after stop:\n%s", r)
	}
	if procs := serverProcesses(e); len(procs) != 0 {
		t.Fatalf("discovery commands started servers: %q", procs)
	}
}

// serverProcesses are the marked processes other than mcpx itself.
func serverProcesses(e *Env) []string {
	var out []string
	for _, c := range e.MarkedCmdlines() {
		if strings.HasPrefix(c, mcpxBin+" ") || c == mcpxBin || strings.HasPrefix(c, mcpxdBin+" daemon ") {
			continue
		}
		out = append(out, c)
	}
	return out
}

func names(ns api.NamespacesResponse) string {
	var s []string
	for _, n := range ns.Namespaces {
		s = append(s, n.Name)
	}
	return strings.Join(s, ",")
}

func TestServerThatExitsAtStart(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "broken": {"command": %s, "env": {"FIXTURE_FAIL_START": "database file is locked by another process"}}
}}`, jsonString(fixtureBin)))
	r := e.Mcpx("call", "broken.echo", "text=x")
	if r.Code != 3 || !strings.Contains(r.Stderr, "database file is locked by another process") {
		t.Fatalf("want exit 3 with the server's stderr tail\n%s", r)
	}
	// The failed start puts the server in a cooldown (1 s, doubled per
	// failure up to 30 s) that the next call reports. On a slow machine
	// the next call may come after the first cooldown and fail to start
	// the server again, which doubles the cooldown; it is seen within a few
	// calls however slow each one is.
	cool := regexp.MustCompile(`(?i)cool`)
	for i := 0; ; i++ {
		r = e.Mcpx("call", "broken.echo", "text=x")
		if r.Code == 3 && cool.MatchString(r.Stderr) {
			break
		}
		if r.Code != 3 || !strings.Contains(r.Stderr, "database file is locked by another process") || i == 6 {
			t.Fatalf("want exit 3 mentioning the cooldown\n%s", r)
		}
	}
}

// A server whose tools cannot be read has its stderr quoted wherever the
// failure is reported (ls NS, refresh, schema, help), and --json exits as
// text does. Found walking through docs/cli.md: only `call` quoted it, and
// `--json ls NS` and `--json refresh` exited 0.
func TestFailedListingQuotesServerStderr(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "broken": {"command": %s, "env": {"FIXTURE_FAIL_START": "no database at /var/db"}}
}}`, jsonString(fixtureBin)))
	const said = "  | no database at /var/db"
	r := e.Mcpx("refresh", "broken")
	if r.Code != 3 || !strings.Contains(r.Stderr, said) {
		t.Fatalf("refresh: want exit 3 quoting the server's stderr\n%s", r)
	}
	if r = e.Mcpx("--json", "refresh", "broken"); r.Code != 3 {
		t.Fatalf("--json refresh: want exit 3 as in text\n%s", r)
	}
	var rr struct {
		Namespaces []struct{ State, Error string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rr); err != nil || len(rr.Namespaces) != 1 || rr.Namespaces[0].State != "error" {
		t.Fatalf("--json refresh: want the answer with state error (%v)\n%s", err, r)
	}
	for _, args := range [][]string{{"ls", "broken"}, {"schema", "broken"}, {"help", "broken.echo"}} {
		r = e.Mcpx(args...)
		if r.Code != 3 || !strings.Contains(r.Stderr, said) || !strings.Contains(r.Stderr, "mcpx refresh broken") {
			t.Errorf("want exit 3 quoting the server's stderr and what to do\n%s", r)
		}
		r = e.Mcpx(append([]string{"--json"}, args...)...)
		var doc struct{ Error struct{ Code, Stderr string } }
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 3 ||
			doc.Error.Code != "server_failed" || !strings.Contains(doc.Error.Stderr, "no database at /var/db") {
			t.Errorf("want an error document with the server's stderr, exit 3 (%v)\n%s", err, r)
		}
	}
}

func TestHangingCallIsCutOffAtCallTimeout(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "mcpx": {"callTimeout": "1s"}}
}}`, jsonString(fixtureBin)))
	r := e.Mcpx("call", "fx.slow", "seconds=60")
	if r.Code != 3 || !regexp.MustCompile(`(?i)time`).MatchString(r.Stderr) {
		t.Fatalf("want exit 3 naming the timeout\n%s", r)
	}
	// The server is still usable afterwards.
	if r := e.MustOK("call", "fx.echo", "text=after"); r.Stdout != "after" {
		t.Fatalf("echo after timeout:\n%s", r)
	}
}

func TestServerThatHangsAtStartIsCutOff(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "stuck": {"command": %s, "env": {"FIXTURE_HANG_START": "1"}, "mcpx": {"startTimeout": "1s"}}
}}`, jsonString(fixtureBin)))
	r := e.Mcpx("call", "stuck.echo", "text=x")
	if r.Code != 3 {
		t.Fatalf("want exit 3\n%s", r)
	}
}

func TestBadInput(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	good := fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}, "tok": {"command": %s, "env": {"TOKEN": "${MCPX_E2E_UNSET_TOKEN}"}}}}`, fx, fx)

	// malformed config: file:line:col
	cfg := e.WriteFile(filepath.Join(e.Work, ".mcp.json"), "{\n  \"mcpServers\": {\n    \"fx\": {\"command\": \"x\",,}\n  }\n}\n")
	r := e.Mcpx("ls")
	if r.Code != 2 || !strings.Contains(r.Stderr, cfg+":3:") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("malformed config: want exit 2 and one line naming %s:3:col\n%s", cfg, r)
	}

	e.WriteFile(cfg, good)
	e.MustOK("refresh", "fx")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "fz.echo", "text=x"}, "fx"},                      // unknown namespace → nearest
		{[]string{"call", "fx.ecko", "text=x"}, "echo"},                    // unknown tool → nearest
		{[]string{"call", "fx.echo", `["not", "an", "object"]`}, "object"}, // not a JSON object
		{[]string{"call", "tok.echo", "text=x"}, "MCPX_E2E_UNSET_TOKEN"},   // unset ${VAR}
	} {
		r := e.Mcpx(c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("want exit 2 and one line containing %q\n%s", c.want, r)
		}
	}
}

func TestRawResultAndJSONArguments(t *testing.T) {
	e := NewEnv(t)
	r := e.MustOK("call", "--raw", "demo.add", `{"a": 2, "b": 40}`)
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("--raw is not JSON: %v\n%s", err, r)
	}
	if !strings.Contains(r.Stdout, "42") {
		t.Fatalf("add 2+40:\n%s", r)
	}
}

// A value exported anew between two commands reaches the server on the
// second: the CLI writes the captured environment and names it on its
// requests (api.HeaderEnvDigest), so the daemon, which otherwise trusts
// the values it read last, reads the file again.
func TestANewlyExportedValueReachesTheServer(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FROM_VAR": "${E2E_TOKEN}"}}
}}`, jsonString(fixtureBin)))
	for _, v := range []string{"one", "two", "two", "three"} {
		e.Set("E2E_TOKEN", v)
		if got := strings.TrimSpace(e.MustOK("call", "fx.env", "name=FROM_VAR").Stdout); got != v {
			t.Fatalf("E2E_TOKEN=%s: the server has FROM_VAR=%q", v, got)
		}
	}
}
