package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// One bad entry of mcpx's own format (here Claude Code's .mcp.json) loses
// that server, not the file: the working fixture server beside it is
// callable, the broken ones are listed as invalid with FILE:LINE:COL, and
// calling one exits 2 naming the place.
func TestBadEntryLosesOneServer(t *testing.T) {
	e := NewEnv(t)
	cfg := e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{
  "mcpServers": {
    "fx": {"command": %s},
    "broken": {"command": "x", "args": "-y pkg"},
    "wind": {"serverUrl": "https://example.invalid/mcp"},
    "vars": {"command": "x", "args": ["${command:pick}"]}
  }
}
`, jsonString(fixtureBin)))
	wantAt := map[string]string{
		"broken": cfg + ":4:40: args: want an array of strings",
		"wind":   cfg + ":5:13: needs a \"command\" (stdio) or a \"url\"",
		"vars":   cfg + ":6:39: args[0]: ${command:pick} is not a variable form",
	}

	if r := e.MustOK("call", "fx.echo", "text=hi"); r.Stdout != "hi" {
		t.Fatalf("the working sibling: %s", r)
	}

	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	got := map[string]api.Namespace{}
	for _, n := range ns.Namespaces {
		got[n.Name] = n
	}
	if n := got["fx"]; n.State == api.StateInvalid || n.Error != "" {
		t.Errorf("fx: %+v", n)
	}
	for name, want := range wantAt {
		if n := got[name]; n.State != api.StateInvalid || !strings.HasPrefix(n.Error, want) {
			t.Errorf("ls %s: %+v, want state invalid and error %q…", name, n, want)
		}
		r := e.Mcpx("call", name+".anything")
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Errorf("call on the broken entry %s: want exit 2 naming %q\n%s", name, want, r)
		}
	}
	if r := e.Mcpx("refresh", "broken"); r.Code != 2 || !strings.Contains(r.Stderr, wantAt["broken"]) {
		t.Errorf("refresh of the broken entry: %s", r)
	}

	// config: a warning per broken entry on stderr, "not usable" on stdout,
	// and the problem in --json.
	r := e.MustOK("config")
	for name, want := range wantAt {
		w := strings.Replace(want, ": ", fmt.Sprintf(": server %q: ", name), 1)
		if !strings.Contains(r.Stderr, "warning: "+w) {
			t.Errorf("config warning for %s lacks %q:\n%s", name, w, r.Stderr)
		}
		if !strings.Contains(r.Stdout, fmt.Sprintf("// %s: not usable: %s", name, want)) {
			t.Errorf("config output for %s lacks the problem %q:\n%s", name, want, r.Stdout)
		}
	}
	var doc struct {
		Servers map[string]struct {
			Problem string `json:"problem"`
		} `json:"servers"`
	}
	e.JSON(&doc, "config")
	if p := doc.Servers["wind"].Problem; !strings.HasPrefix(p, wantAt["wind"]) || !strings.Contains(p, `"serverUrl" is Windsurf's spelling`) {
		t.Errorf("config --json problem of wind: %q", p)
	}
	if p := doc.Servers["fx"].Problem; p != "" {
		t.Errorf("config --json problem of fx: %q", p)
	}

	// doctor names each broken entry and where it is, as a warning.
	r = e.Mcpx("doctor")
	for name, want := range wantAt {
		w := strings.Replace(want, ": ", fmt.Sprintf(": server %q: ", name), 1)
		if !strings.Contains(r.Stdout+r.Stderr, w) {
			t.Errorf("doctor lacks %q:\n%s", w, r)
		}
	}
	if r.Code == 2 {
		t.Errorf("doctor failed the config for a broken entry: %s", r)
	}
}

// What stays strict in mcpx's own files: a syntax error and an error inside
// an mcpx block fail the whole file (exit 2, FILE:LINE:COL), so even the
// good sibling is not callable.
func TestFileErrorsStayStrict(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	for _, c := range []struct {
		name, content, want string
	}{
		{"syntax", "{\n  \"mcpServers\": {\n    \"fx\": {\"command\": %s},\n    \"x\": {\"command\": \"x\",,}\n  }\n}\n", ":4:26: "},
		{"mcpx block", "{\n  \"mcpServers\": {\n    \"fx\": {\"command\": %s,\n           \"mcpx\": {\"sharng\": \"shared\"}}\n  }\n}\n", `:4:21: server "fx": mcpx block: unknown key "sharng"`},
		{"server map", "{\n  \"mcpServers\": {\"fx\": {\"command\": %s}},\n  \"servers\": [1]\n}\n", `:3:14: "servers" must be an object of servers`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(c.content, fx))
			for _, args := range [][]string{{"ls"}, {"call", "fx.echo", "text=hi"}} {
				r := e.Mcpx(args...)
				if r.Code != 2 || !strings.Contains(r.Stderr, cfg+c.want) {
					t.Errorf("want exit 2 naming %s%s\n%s", cfg, c.want, r)
				}
			}
		})
	}
}
