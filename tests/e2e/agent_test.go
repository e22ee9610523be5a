package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Arguments travel raw and the daemon types and checks them against the
// tool's schema (issue #10): the real npm servers' schemas.
func TestArgumentsCheckedByTheDaemon(t *testing.T) {
	e := NewEnv(t)
	shared := npmConfig(t, e)
	e.MustOK("refresh")
	greeting := filepath.Join(shared, "greeting.txt")

	// An unknown argument names the nearest parameter, exit 2, one line.
	r := e.Mcpx("call", "filesystem.read_text_file", "path="+greeting, "haed=1")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"haed"`) || !strings.Contains(r.Stderr, "did you mean head?") {
		t.Fatalf("unknown argument: want exit 2 suggesting head\n%s", r)
	}
	// A missing required argument is named.
	r = e.Mcpx("call", "everything.get-sum", "a=1")
	if r.Code != 2 || !strings.Contains(r.Stderr, `needs argument "b"`) {
		t.Fatalf("missing required: want exit 2 naming b\n%s", r)
	}
	// A wrong type is refused before the server sees it.
	r = e.Mcpx("call", "everything.get-sum", "a=one", "b=2")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"one" is not a number`) {
		t.Fatalf("wrong type: want exit 2\n%s", r)
	}
	r = e.Mcpx("call", "everything.get-sum", `{"a": "1", "b": 2}`)
	if r.Code != 2 || !strings.Contains(r.Stderr, "/a") {
		t.Fatalf("wrong type in a JSON object: want exit 2 naming /a\n%s", r)
	}
	// --no-validate sends as given: the server itself answers.
	r = e.Mcpx("call", "--no-validate", "filesystem.read_text_file", "path="+greeting, "haed=1")
	if r.Code != 0 || r.Stdout != "hello from the filesystem server\n" {
		t.Fatalf("--no-validate:\n%s", r)
	}

	// @FILE: the whole object from a file; key=@FILE: one value.
	args := e.WriteFile("args.json", `{"a": 20, "b": 22}`)
	if r := e.MustOK("call", "everything.get-sum", "@"+args); !strings.Contains(r.Stdout, "42") {
		t.Fatalf("@FILE:\n%s", r)
	}
	msg := e.WriteFile("message.txt", "from a file\nwith two lines\n")
	if r := e.MustOK("call", "everything.echo", "message=@"+msg); !strings.Contains(r.Stdout, "from a file\nwith two lines\n") {
		t.Fatalf("key=@FILE:\n%s", r)
	}
	// A repeated key builds an array where the schema says array.
	other := e.WriteFile(filepath.Join(shared, "other.txt"), "second file\n")
	r = e.MustOK("call", "filesystem.read_multiple_files", "paths="+greeting, "paths="+other)
	if !strings.Contains(r.Stdout, "hello from the filesystem server") || !strings.Contains(r.Stdout, "second file") {
		t.Fatalf("repeated key as array:\n%s", r)
	}
	var cr api.CallResponse
	e.JSON(&cr, "call", "memory.create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["o"]}]}`)
	if cr.IsError {
		t.Fatalf("create_entities: %s", cr.Result)
	}
}

// Text is written exactly as the server sent it; --raw keeps binary data.
func TestFaithfulOutput(t *testing.T) {
	e := NewEnv(t)
	shared := npmConfig(t, e)
	// A file without a final newline, and one with odd whitespace.
	for name, content := range map[string]string{
		"nonl.txt":  "no newline at the end",
		"odd.txt":   "\n\ttabs and\r\nCRLF  \n\n",
		"plain.txt": "one line\n",
	} {
		path := e.WriteFile(filepath.Join(shared, name), content)
		r := e.MustOK("call", "filesystem.read_text_file", "path="+path)
		got := filepath.Join(e.Root, "copy-"+name)
		if err := os.WriteFile(got, []byte(r.Stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(path)
		if !bytes.Equal([]byte(r.Stdout), want) {
			t.Errorf("%s through read_text_file differs: got %q, want %q", name, r.Stdout, want)
		}
	}

	// --raw keeps text bytes JSON would escape for HTML.
	e.WriteFile(filepath.Join(shared, "html.txt"), "<a href=\"x\">&amp;</a>\n")
	r0 := e.MustOK("call", "--raw", "filesystem.read_text_file", "path="+filepath.Join(shared, "html.txt"))
	if !strings.Contains(r0.Stdout, `<a href=\"x\">&amp;</a>`) {
		t.Errorf("--raw escaped the text:\n%s", r0)
	}

	// --raw: the result exactly as received, image data intact.
	r := e.MustOK("call", "--raw", "everything.get-tiny-image")
	var raw struct {
		Content []struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
		t.Fatalf("--raw is not JSON: %v\n%s", err, r)
	}
	var image []byte
	for _, c := range raw.Content {
		if c.Type == "image" {
			var err error
			if image, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
				t.Fatalf("--raw image data is not base64: %v", err)
			}
		}
	}
	if !bytes.HasPrefix(image, []byte("\x89PNG")) || strings.Contains(r.Stdout, "_mcpx") {
		t.Fatalf("--raw lost the image data:\n%s", r.Stdout)
	}
	// --raw --json: the same result, the stored path beside it.
	var withPaths api.CallResponse
	e.JSON(&withPaths, "call", "--output", "raw", "everything.get-tiny-image")
	if len(withPaths.Blobs) != 1 || !strings.Contains(string(withPaths.Result), `"data"`) {
		t.Fatalf("--raw --json: %+v", withPaths)
	}
	stored, err := os.ReadFile(withPaths.Blobs[0].Path)
	if err != nil || !bytes.Equal(stored, image) {
		t.Fatalf("stored blob differs from the inline image (%v)", err)
	}
	// Text mode prints the path instead of base64.
	r = e.MustOK("call", "everything.get-tiny-image")
	if !strings.Contains(r.Stdout, withPaths.Blobs[0].Path) || strings.Contains(r.Stdout, "iVBOR") {
		t.Fatalf("text mode:\n%s", r)
	}
}

// agentConfig is npmConfig plus servers that fail in each way an agent
// must be told about: a filesystem server whose policy denies destructive
// tools, a server that cannot start, and one with a one-second call limit.
func agentConfig(t *testing.T, e *Env) string {
	t.Helper()
	shared := npmConfig(t, e)
	everything := npmBin(t, "mcp-server-everything")
	filesystem := npmBin(t, "mcp-server-filesystem")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{
  "mcpServers": {
    "everything": {"command": %[1]s, "args": ["stdio"]},
    "filesystem": {"command": %[2]s, "args": [%[3]s]},
    "memory": {"command": %[4]s, "env": {"MEMORY_FILE_PATH": %[5]s}},
    "guarded": {"command": %[2]s, "args": [%[3]s], "mcpx": {"policy": {"destructive": "deny"}}},
    "broken": {"command": "/bin/false"},
    "hasty": {"command": %[1]s, "args": ["stdio"], "mcpx": {"callTimeout": "1s"}},
    "secret": {"command": %[1]s, "args": ["stdio"], "env": {"TOKEN": "${MCPX_E2E_UNSET_TOKEN}"}}
  }
}`, jsonString(everything), jsonString(filesystem), jsonString(shared), jsonString(npmBin(t, "mcp-server-memory")),
		jsonString(filepath.Join(e.Root, "memory.jsonl"))))
	return shared
}

// Every failure under --json is one JSON document on stdout with a stable
// code and the exit code of text mode.
func TestErrorsAsJSON(t *testing.T) {
	e := NewEnv(t)
	shared := agentConfig(t, e)
	greeting := filepath.Join(shared, "greeting.txt")
	for _, c := range []struct {
		args []string
		code string
		exit int
	}{
		{[]string{"cal", "everything.echo"}, "usage", 2},
		{[]string{"call", "--bogus", "everything.echo"}, "usage", 2},
		{[]string{"call", "everythin.echo", "message=x"}, "unknown_namespace", 2},
		{[]string{"call", "everything.ecko", "message=x"}, "unknown_tool", 2},
		{[]string{"call", "everything.get-sum", "a=1", "c=2"}, "invalid_arguments", 2},
		{[]string{"call", "everything.get-sum", "a=1"}, "invalid_arguments", 2},
		{[]string{"call", "filesystem.edit_file", "path=" + greeting, "edits:=[]"}, "confirmation_required", 4},
		{[]string{"call", "guarded.edit_file", "path=" + greeting, "edits:=[]"}, "policy_denied", 4},
		{[]string{"call", "broken.anything"}, "server_failed", 3},
		{[]string{"call", "hasty.trigger-long-running-operation", "duration=5", "steps=5"}, "timeout", 3},
		{[]string{"--config", filepath.Join(e.Root, "missing.json"), "ls"}, "config_error", 2},
		{[]string{"call", "secret.echo", "message=x"}, "unset_variable", 2},
		{[]string{"call", "everything.echo", "message=@" + e.WriteFile("huge.txt", strings.Repeat("x", 5<<20))}, "request_too_large", 2},
	} {
		args := append([]string{"--json"}, c.args...)
		r := e.Mcpx(args...)
		var doc struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Exit    int    `json:"exit"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Errorf("stdout is not one JSON document: %v\n%s", err, r)
			continue
		}
		if doc.Error.Code != c.code || doc.Error.Exit != c.exit || r.Code != c.exit || doc.Error.Message == "" {
			t.Errorf("want code %s exit %d\n%s", c.code, c.exit, r)
		}
		// The same exit code in text mode.
		if rt := e.Mcpx(c.args...); rt.Code != c.exit || rt.Stdout != "" {
			t.Errorf("text mode: want exit %d and nothing on stdout\n%s", c.exit, rt)
		}
	}
	// --config names the flag, not MCPX_CONFIG.
	r := e.Mcpx("--config", filepath.Join(e.Root, "missing.json"), "ls")
	if !strings.Contains(r.Stderr, "--config") || strings.Contains(r.Stderr, "MCPX_CONFIG") {
		t.Errorf("--config missing.json should blame --config\n%s", r)
	}
}

// Usage errors exit 2 and suggest the nearest command or flag.
func TestUsageErrorsExit2(t *testing.T) {
	e := NewEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cal", "demo.echo"}, "did you mean call?"},
		{[]string{"cache", "foo"}, "cache has no subcommand"},
		{[]string{"completion", "tcsh"}, "no subcommand"},
		{[]string{"ls", "--jsn"}, "unknown flag --jsn; did you mean --json?"},
		{[]string{"call", "--raww", "demo.echo"}, "did you mean --raw?"},
		{[]string{"help", "cll"}, "did you mean call?"},
		{[]string{"call", "demo"}, "NS.TOOL"},
		{[]string{"schema", "demo.echo", "--format", "xml"}, "json or ts"},
	} {
		r := e.Mcpx(c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("want exit 2 and %q\n%s", c.want, r)
		}
	}
	// MCPX_SERVICE with an unknown value: exit 2, with or without a daemon.
	e.MustOK("call", "demo.echo", "text=x") // a daemon runs now
	e.Set("MCPX_SERVICE", "dirct")
	for i := 0; i < 2; i++ {
		if r := e.Mcpx("ls"); r.Code != 2 || !strings.Contains(r.Stderr, "did you mean direct?") {
			t.Errorf("MCPX_SERVICE=dirct (round %d): want exit 2\n%s", i, r)
		}
		e.Set("MCPX_SERVICE", "direct")
		e.MustOK("stop")
		e.Set("MCPX_SERVICE", "dirct")
	}
	// help works for commands and subcommands.
	e.Set("MCPX_SERVICE", "direct")
	if r := e.MustOK("help", "cache", "gc"); !strings.Contains(r.Stdout, "mcpx cache gc") {
		t.Errorf("help cache gc:\n%s", r)
	}
	if r := e.MustOK("help"); !strings.Contains(r.Stdout, "COMMANDS") {
		t.Errorf("help:\n%s", r)
	}
	// mcpx --help shows the exit codes and where configs are looked for.
	r := e.MustOK("--help")
	for _, want := range []string{"Exit codes", "2  usage or configuration error", "4  refused by policy", ".mcp.json", "$MCPX_CONFIG", "~/.config/mcpx/config.json"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("mcpx --help lacks %q", want)
		}
	}
}

// Tool help lists the parameters of a tool, read from its schema, and a
// server never read is read for it.
func TestToolHelp(t *testing.T) {
	e := NewEnv(t)
	npmConfig(t, e)
	// No refresh: naming the tool reads the server.
	r := e.MustOK("call", "everything.get-sum", "--help")
	for _, want := range []string{"everything.get-sum", "Returns the sum of two numbers", "a (number, required)", "First number",
		"b (number, required)", "Second number", "mcpx call everything.get-sum a=1 b=1"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("call everything.get-sum --help lacks %q\n%s", want, r)
		}
	}
	if h := e.MustOK("help", "everything.get-sum"); h.Stdout != r.Stdout {
		t.Errorf("help NS.TOOL differs from call NS.TOOL --help:\n%s\n%s", h.Stdout, r.Stdout)
	}
	// Defaults, nested objects and arrays of them.
	r = e.MustOK("help", "memory.create_entities")
	for _, want := range []string{"entities (array of object, required)", "observations (array of string, required)", `entities:=[{`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("help memory.create_entities lacks %q\n%s", want, r)
		}
	}
	r = e.MustOK("help", "everything.trigger-long-running-operation")
	if !strings.Contains(r.Stdout, "duration (number, optional, default 10)") {
		t.Errorf("help lacks the default:\n%s", r)
	}
	// The example line of every tool is a call the daemon accepts (checked
	// with --no-validate off, on a tool that is safe to call).
	var tool api.Tool
	e.JSON(&tool, "call", "everything.get-sum", "--help")
	if tool.Name != "get-sum" || !strings.Contains(string(tool.Definition), `"inputSchema"`) {
		t.Errorf("--json help: %+v", tool)
	}
	example := "mcpx call everything.get-sum a=1 b=1"
	if r := e.MustOK(strings.Fields(example)[1:]...); !strings.Contains(r.Stdout, "2") {
		t.Errorf("the example call failed:\n%s", r)
	}
	// ls NS and schema NS.T on a never-read namespace read it too.
	if r := e.MustOK("ls", "filesystem"); !strings.Contains(r.Stdout, "read_text_file") {
		t.Errorf("ls filesystem (never read):\n%s", r)
	}
	if r := e.MustOK("schema", "memory.read_graph"); !strings.Contains(r.Stdout, "read_graph") {
		t.Errorf("schema memory.read_graph:\n%s", r)
	}
}

// relevance is the search test set: a query a user might type, and the tool
// that must be among the first three results.
var relevance = []struct{ query, want string }{
	{"sum", "everything.get-sum"},
	{"add two numbers", "everything.get-sum"},
	{"creating entity", "memory.create_entities"},
	{"create entities", "memory.create_entities"},
	{"read a file", "filesystem.read_text_file"},
	{"read several files at once", "filesystem.read_multiple_files"},
	{"list directory contents", "filesystem.list_directory"},
	{"directory listing with sizes", "filesystem.list_directory_with_sizes"},
	{"move rename file", "filesystem.move_file"},
	{"search files by pattern", "filesystem.search_files"},
	{"tree of directories", "filesystem.directory_tree"},
	{"edit lines in a file", "filesystem.edit_file"},
	{"write file", "filesystem.write_file"},
	{"file metadata", "filesystem.get_file_info"},
	{"allowed directories", "filesystem.list_allowed_directories"},
	{"make a new folder directory", "filesystem.create_directory"},
	{"image", "everything.get-tiny-image"},
	{"environment variables", "everything.get-env"},
	{"echo message back", "everything.echo"},
	{"progress of a long running operation", "everything.trigger-long-running-operation"},
	{"compress file gzip", "everything.gzip-file-as-resource"},
	{"structured content", "everything.get-structured-content"},
	{"delete relations", "memory.delete_relations"},
	{"add observations to entities", "memory.add_observations"},
	{"remove observations", "memory.delete_observations"},
	{"find nodes in the graph", "memory.search_nodes"},
	{"read whole knowledge graph", "memory.read_graph"},
	{"open nodes by name", "memory.open_nodes"},
}

func TestSearchRelevance(t *testing.T) {
	e := NewEnv(t)
	npmConfig(t, e)
	// Never read: search starts nothing and says what was not searched.
	r := e.MustOK("search", "sum")
	if r.Stdout != "" || !strings.Contains(r.Stderr, "mcpx refresh") {
		t.Fatalf("search before refresh:\n%s", r)
	}
	e.MustOK("refresh")
	for _, c := range relevance {
		var sr api.SearchResponse
		e.JSON(&sr, "search", "--limit", "3", c.query)
		var got []string
		for _, h := range sr.Results {
			got = append(got, h.Namespace+"."+h.Name)
			if len(h.Definition) != 0 {
				t.Errorf("search results carry whole schemas: %s", h.Name)
			}
			if len(h.Why) == 0 || len(h.Why[0].Fields) == 0 {
				t.Errorf("search %q: %s does not say why it matched: %+v", c.query, h.Name, h.Why)
			}
		}
		if len(got) > 3 || !slices.Contains(got, c.want) {
			t.Errorf("search %q: top 3 %v lack %s", c.query, got, c.want)
		}
	}
	// A stop word matches nothing; --limit defaults to 10; ties by name.
	var sr api.SearchResponse
	e.JSON(&sr, "search", "a")
	if len(sr.Results) != 0 {
		t.Errorf("search a: %d results", len(sr.Results))
	}
	e.JSON(&sr, "search", "file directory")
	if len(sr.Results) != 10 {
		t.Errorf("search file directory: %d results, want the default limit 10", len(sr.Results))
	}
	// The namespace is a filter, by flag or prefix, never a matched word.
	for _, args := range [][]string{{"search", "--ns", "memory", "delete"}, {"search", "memory:", "delete"}, {"search", "memory:delete"}} {
		e.JSON(&sr, args...)
		if len(sr.Results) == 0 {
			t.Errorf("%q found nothing", args)
		}
		for _, h := range sr.Results {
			if h.Namespace != "memory" {
				t.Errorf("%q found %s.%s", args, h.Namespace, h.Name)
			}
		}
	}
	// A memory tool found by "memory" found it in its own text, through
	// the thesaurus ("memory" ~ knowledge graph) or in the server's own
	// name (serverInfo: memory-server), as its why says; never through the
	// namespace, which is the user's name for the server.
	e.JSON(&sr, "search", "memory")
	for _, h := range sr.Results {
		own := strings.Contains(strings.ToLower(h.Description), "memor")
		thesaurus := slices.ContainsFunc(h.Why, func(m api.SearchMatch) bool { return m.Word == "memory" && m.Via != "" })
		serverName := slices.ContainsFunc(h.Why, func(m api.SearchMatch) bool {
			return m.Word == "memory" && slices.Equal(m.Fields, []string{"server name"})
		})
		if h.Namespace == "memory" && !own && !thesaurus && !serverName {
			t.Errorf("the namespace name matched as a word: %s.%s %+v", h.Namespace, h.Name, h.Why)
		}
	}
	// Text results: NS.TOOL and the first sentence.
	r = e.MustOK("search", "-n", "1", "gzip")
	if r.Stdout != "everything.gzip-file-as-resource  Compresses a single file using gzip compression.\n" {
		t.Errorf("text result:\n%s", r)
	}
}

// schema --format ts compiles under tsc --strict for every tool of the three
// npm servers and the demo server.
func TestTypeScriptCompiles(t *testing.T) {
	tsc := npmBin(t, "tsc")
	e := NewEnv(t)
	npmConfig(t, e)
	e.MustOK("refresh")
	dir := filepath.Join(e.Root, "ts")
	var files []string
	for _, ns := range []string{"everything", "filesystem", "memory"} {
		r := e.MustOK("schema", ns, "--format", "ts")
		files = append(files, e.WriteFile(filepath.Join(dir, ns+".ts"), r.Stdout))
	}
	demo := NewEnv(t) // no config: the built-in demo server
	r := demo.MustOK("schema", "demo", "--format", "ts")
	if !strings.Contains(r.Stdout, "TimeInput") {
		t.Fatalf("demo declarations lack TimeInput:\n%s", r)
	}
	files = append(files, e.WriteFile(filepath.Join(dir, "demo.ts"), r.Stdout))
	cmd := exec.Command(tsc, append([]string{"--noEmit", "--strict", "--target", "es2020"}, files...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tsc --noEmit --strict: %v\n%s", err, out)
	}
}

// The server's progress reaches the user while the call runs: a bar on a
// terminal (run through a pseudo-terminal with script(1)), one line per
// update with --progress, nothing otherwise.
func TestProgressThroughAPseudoTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	e := NewEnv(t)
	npmConfig(t, e)
	call := []string{"call", "everything.trigger-long-running-operation", "duration=2", "steps=4"}

	line := quote(mcpxBin) + " " + strings.Join(call, " ")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qec", line, "/dev/null")
	cmd.Dir = e.Work
	cmd.Env = e.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%q", line, err, out)
	}
	text := string(out)
	var updates []string
	for _, pct := range []string{" 25%", " 50%", " 75%", "100%"} {
		if strings.Contains(text, pct) {
			updates = append(updates, pct)
		}
	}
	if len(updates) < 2 || !strings.Contains(text, "\r\x1b[K[####") {
		t.Fatalf("want at least two progress bar updates on the terminal, got %v in %q", updates, text)
	}
	if !strings.Contains(text, "Long running operation completed") {
		t.Fatalf("the result is missing: %q", text)
	}
	// On a terminal the text gains the newline it lacks (script(1) shows
	// it as \r\n); without one it is written exactly as sent (below).
	if !strings.HasSuffix(text, "Steps: 4.\r\n") {
		t.Errorf("on a terminal the result should end with one newline: %q", text)
	}

	// Without a terminal: nothing on stderr, unless --progress.
	r := e.MustOK(call...)
	if r.Stderr != "" || !strings.HasSuffix(r.Stdout, "Steps: 4.") {
		t.Fatalf("no terminal, no --progress:\n%s", r)
	}
	r = e.MustOK(append([]string{"call", "--progress"}, call[1:]...)...)
	if n := strings.Count(r.Stderr, "everything progress "); n < 2 || !strings.Contains(r.Stderr, "progress 2/4") {
		t.Fatalf("--progress: want one line per update\n%s", r)
	}
	if strings.Contains(r.Stdout, "progress") {
		t.Fatalf("--progress wrote to stdout:\n%s", r)
	}
}

// quote quotes s for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Messages worth reading: a server's stderr tail once with the hint on its
// own line, a non-JSON line a server wrote on stdout quoted, and the request
// size limit named.
func TestMessagesWorthReading(t *testing.T) {
	e := NewEnv(t)
	bad := e.WriteFile("bad.sh", "#!/bin/sh\necho 'boom: no database at /var/db' >&2\nexit 1\n")
	if err := os.Chmod(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	chatty := e.WriteFile("chatty.sh", "#!/bin/sh\necho 'Welcome to my server v1.0'\nexec sleep 30\n")
	if err := os.Chmod(chatty, 0o755); err != nil {
		t.Fatal(err)
	}
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"bad": {"command": %s}, "fx": {"command": %s},
		"chatty": {"command": %s, "mcpx": {"startTimeout": "2s"}}}}`,
		jsonString(bad), jsonString(fixtureBin), jsonString(chatty)))
	// A line on stdout that is not JSON-RPC is quoted in the error.
	if r := e.Mcpx("call", "chatty.anything"); r.Code != 3 || !strings.Contains(r.Stderr, `"Welcome to my server v1.0"`) {
		t.Errorf("want the non-JSON stdout line quoted\n%s", r)
	}
	for i := 0; i < 2; i++ { // the failed start, then its cooldown
		r := e.Mcpx("call", "bad.anything")
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 3 || strings.Count(r.Stderr, "boom: no database") != 1 || !strings.HasPrefix(lines[len(lines)-1], "Check the bad server's entry") {
			t.Errorf("want the stderr tail once and the hint on its own last line\n%s", r)
		}
	}
	huge := e.WriteFile("huge.txt", strings.Repeat("x", 5<<20))
	r := e.Mcpx("call", "fx.echo", "text=@"+huge)
	if r.Code != 2 || !strings.Contains(r.Stderr, "request size limit") {
		t.Errorf("want exit 2 naming the request size limit\n%s", r)
	}
}
