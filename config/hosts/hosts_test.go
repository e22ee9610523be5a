package hosts

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testkit"
	"time"
)

func TestTranslate(t *testing.T) {
	c := &Context{Root: "/w/proj", Home: "/home/u"}
	user := &Context{Home: "/home/u"}
	vscodeStyle := varStyle{envColon: true, vscode: true}
	cases := []struct {
		style   varStyle
		c       *Context
		in, out string
		err     string
	}{
		{literal, c, "plain $HOME ${X}", "plain $HOME $${X}", ""},
		{claudeVars, c, "${A}-${B:-d}-$C", "${A}-${B:-d}-$C", ""},
		{claudeVars, c, "${env:A}", "", "not a variable form"},
		{vscodeStyle, c, "${env:TOKEN} ${userHome}/x ${workspaceFolder}${/}y ${workspaceFolderBasename}", "${TOKEN} ${HOME}/x /w/proj/y proj", ""},
		{vscodeStyle, c, "Bearer ${input:gh-token}", "Bearer ${input:gh-token}", ""},
		{vscodeStyle, user, "${workspaceFolder}", "", "no meaning in a user-level file"},
		{vscodeStyle, c, "${command:pick}", "", "${command:pick}"},
		{varStyle{dollarBrace: true, bareDollar: true}, c, "$HOME/a ${B} $1 $", "${HOME}/a ${B} $1 $", ""},
		{varStyle{braceEnv: true}, c, "{env:TOKEN}/x {literal}", "${TOKEN}/x {literal}", ""},
		{varStyle{braceEnv: true}, c, "{file:~/.secret}", "", "{file:~/.secret}"},
		{varStyle{envColon: true}, c, "${env:A} ${B}", "", "${B}"},
	}
	for _, tc := range cases {
		got, err := tc.style.translate(tc.in, tc.c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("translate(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.out {
			t.Errorf("translate(%q) = %q, %v; want %q", tc.in, got, err, tc.out)
		}
	}
}

func byName(f *File) map[string]Entry {
	out := map[string]Entry{}
	for _, e := range f.Entries {
		out[e.Name] = e
	}
	return out
}

func TestReaders(t *testing.T) {
	c := &Context{Path: "/p/f", Home: "/home/u", Root: "/p"}
	gem := byName(gemini.Read(testkit.Object(t, `{"mcpServers": {
		"sse": {"url": "https://s/sse", "headers": {"A": "$TOKEN"}},
		"http": {"httpUrl": "https://h/mcp", "includeTools": ["a"], "excludeTools": ["b"], "trust": true, "timeout": 30000},
		"both": {"url": "https://a", "httpUrl": "https://b"}
	}}`), c))
	if e := gem["sse"]; e.Transport != SSE || e.Headers["A"] != "${TOKEN}" || e.Problem != "" {
		t.Errorf("gemini url is SSE: %+v", e)
	}
	if e := gem["http"]; e.CallTimeout != 30*time.Second || e.Transport != HTTP || !reflect.DeepEqual(e.Tools, []string{"a"}) || !reflect.DeepEqual(e.ExcludeTools, []string{"b"}) ||
		!reflect.DeepEqual(e.Ignored, []string{"trust"}) {
		t.Errorf("gemini httpUrl: %+v", e)
	}
	gx := byName(gemini.Read(testkit.Object(t, `{"mcp": {"excluded": ["x"]}, "mcpServers": {"x": {"command": "a"}, "y": {"command": "b"}}}`), c))
	if !gx["x"].Disabled || gx["y"].Disabled {
		t.Errorf("gemini mcp.excluded: %+v", gx)
	}
	if gem["both"].Problem == "" {
		t.Error("gemini url and httpUrl together must be a problem")
	}

	ws := byName(windsurf.Read(testkit.Object(t, `{"mcpServers": {
		"r": {"serverUrl": "https://r/mcp", "headers": {"Authorization": "Bearer ${env:T}"}},
		"bad": {"serverUrl": "ws://x"},
		"none": {"disabledTools": []},
		"off": {"command": "x", "disabled": true}
	}}`), c))
	if e := ws["r"]; e.URL != "https://r/mcp" || e.Transport != HTTP || e.Headers["Authorization"] != "Bearer ${T}" || e.Problem != "" {
		t.Errorf("windsurf serverUrl: %+v", e)
	}
	if ws["bad"].Problem == "" || ws["none"].Problem == "" || !ws["off"].Disabled {
		t.Errorf("windsurf entries: %+v", ws)
	}

	cl := byName(cline.Read(testkit.Object(t, `{"mcpServers": {"s": {"url": "https://c/sse"}, "h": {"url": "https://c/mcp", "type": "streamableHttp"},
		"old": {"url": "https://c/mcp", "transportType": "streamableHttp"}}}`), c))
	if cl["s"].Transport != SSE || cl["h"].Transport != HTTP || cl["old"].Transport != HTTP {
		t.Errorf("cline: %+v", cl)
	}

	oc := byName(opencode.Read(testkit.Object(t, `{"mcp": {
		"l": {"type": "local", "command": ["npx", "-y", "pkg"], "environment": {"K": "{env:K}"}},
		"r": {"type": "remote", "url": "https://o/mcp", "enabled": false}
	}}`), c))
	if e := oc["l"]; e.Command != "npx" || !reflect.DeepEqual(e.Args, []string{"-y", "pkg"}) || e.Env["K"] != "${K}" || e.Transport != Stdio {
		t.Errorf("opencode local: %+v", e)
	}
	if !oc["r"].Disabled {
		t.Errorf("opencode enabled:false: %+v", oc["r"])
	}

	z := byName(zed.Read(testkit.Object(t, `{"context_servers": {
		"new": {"command": "srv", "args": ["a"]},
		"old": {"command": {"path": "srv", "args": ["b"], "env": {"E": "1"}}},
		"ext": {"settings": {}}
	}}`), c))
	if z["new"].Command != "srv" || z["old"].Args[0] != "b" || z["old"].Env["E"] != "1" || !strings.Contains(z["ext"].Problem, "extension") {
		t.Errorf("zed: %+v", z)
	}

	cx := byName(codex.Read(map[string]any{"mcp_servers": map[string]any{
		"s": map[string]any{"command": "srv", "env_vars": []any{"TOKEN"}, "enabled_tools": []any{"a"}, "startup_timeout_sec": int64(20), "tool_timeout_sec": 1.5},
		"h": map[string]any{"url": "https://c/mcp", "bearer_token_env_var": "GH", "env_http_headers": map[string]any{"X-Key": "KEY"}},
	}}, c))
	if e := cx["s"]; e.Env["TOKEN"] != "${TOKEN}" || e.Tools[0] != "a" || e.Transport != Stdio ||
		e.StartTimeout != 20*time.Second || e.CallTimeout != 1500*time.Millisecond || len(e.Ignored) != 0 {
		t.Errorf("codex stdio: %+v", e)
	}
	if e := cx["h"]; e.Headers["Authorization"] != "Bearer ${GH}" || e.Headers["X-Key"] != "${KEY}" || e.Transport != HTTP {
		t.Errorf("codex http: %+v", e)
	}

	vs := vscode.Read(testkit.Object(t, `{"mcp": {"servers": {"s": {"type": "sse", "url": "https://v/sse"}}, "inputs": [{"id": "k", "password": true}]}}`),
		&Context{Path: "/home/u/.config/Code/User/settings.json", Home: "/home/u"})
	if len(vs.Entries) != 1 || vs.Entries[0].Transport != SSE || len(vs.Inputs) != 1 || !vs.Inputs[0].Password {
		t.Errorf("vscode settings: %+v", vs)
	}
}

func TestClaudeScopesAndApprovals(t *testing.T) {
	d := testkit.Object(t, `{"projects": {
		"/w": {"mcpServers": {"a": {"command": "x"}}, "enabledMcpjsonServers": ["s1"], "disabledMcpjsonServers": ["s2"]},
		"/w/p": {"mcpServers": {"b": {"command": "y"}}, "enableAllProjectMcpServers": true},
		"/w/empty": {"mcpServers": {}}
	}}`)
	if got := ClaudeScopes(d, "/w/p/sub"); !reflect.DeepEqual(got, []string{"/w/p", "/w"}) {
		t.Errorf("scopes = %v", got)
	}
	if got := ClaudeScopes(d, "/other"); len(got) != 0 {
		t.Errorf("scopes elsewhere = %v", got)
	}
	a := ClaudeApprovalOf(d, "/w")
	if !a.Approved("s1") || a.Approved("s2") || a.Approved("s3") {
		t.Errorf("approval /w: %+v", a)
	}
	if !ClaudeApprovalOf(d, "/w/p").Approved("any") {
		t.Error("enableAllProjectMcpServers not honoured")
	}
	f := claudeCode.Read(d, &Context{Scope: "/w/p"})
	if len(f.Entries) != 1 || f.Entries[0].Name != "b" {
		t.Errorf("local scope entries: %+v", f.Entries)
	}
}

func TestIdentify(t *testing.T) {
	env := NewEnv(func(string) string { return "" }, "/home/u", "linux")
	for path, want := range map[string]string{
		"/home/u/.claude.json":                      "claude-code",
		"/home/u/.claude.json#/w":                   "claude-code",
		"/w/.mcp.json":                              "claude-code",
		"/w/.mcpx.json":                             "mcpx",
		"/w/.mcpx/config.json":                      "mcpx",
		"/home/u/.config/mcpx/config.json":          "mcpx",
		"/w/.cursor/mcp.json":                       "cursor",
		"/w/.vscode/mcp.json":                       "vscode",
		"/home/u/.config/Code/User/mcp.json":        "vscode",
		"/w/.gemini/settings.json":                  "gemini",
		"/w/.codex/config.toml":                     "codex",
		"/tmp/some.toml":                            "codex",
		"/w/opencode.jsonc":                         "opencode",
		"/w/.zed/settings.json":                     "zed",
		"/home/u/.codeium/windsurf/mcp_config.json": "windsurf",
		"/x/claude_desktop_config.json":             "claude-desktop",
		"/elsewhere/servers.json":                   "mcpx",
	} {
		if got := Identify(path, env).Name; got != want {
			t.Errorf("Identify(%s) = %s, want %s", path, got, want)
		}
	}
}

func TestProjectFilesOrder(t *testing.T) {
	var got []string
	for _, nf := range ProjectFiles(nil) {
		got = append(got, nf.Path)
	}
	want := []string{".mcpx.json", ".mcpx/config.json", ".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json",
		".gemini/settings.json", "opencode.json", "opencode.jsonc", ".codex/config.toml", ".zed/settings.json"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("project files %q\nwant %q", got, want)
	}
	for _, h := range All {
		if len(h.Project) > 0 && !slices.Contains(projectOrder, h) {
			t.Errorf("host %s has project files but no place in projectOrder", h.Name)
		}
	}
}

// opencode's V2 layout, "mcp": {"servers": {…}}, is read as servers (not
// as one server named "servers"), with "disabled" and the split timeout;
// V1's "enabled" and timeouts still apply to V1 files, and a V1 server
// that happens to be named "servers" stays one.
func TestOpencodeLayouts(t *testing.T) {
	c := &Context{Path: "/home/u/.config/opencode/opencode.jsonc", Level: User, Home: "/home/u"}
	v2 := opencode.Read(testkit.Object(t, `{"mcp": {"timeout": {"startup": 20000, "request": 90000}, "servers": {
		"l": {"type": "local", "command": ["npx", "-y", "pkg"], "cwd": "sub", "environment": {"K": "{env:K}"}},
		"r": {"type": "remote", "url": "https://o/mcp", "timeout": {"request": 1500}},
		"off": {"type": "local", "command": ["x"], "disabled": true}
	}}}`), c)
	oc := byName(v2)
	if len(oc) != 3 || oc["servers"].Name != "" {
		t.Fatalf("V2 entries: %+v", v2.Entries)
	}
	if e := oc["l"]; e.Command != "npx" || !reflect.DeepEqual(e.Args, []string{"-y", "pkg"}) || e.Cwd != "sub" || e.Env["K"] != "${K}" ||
		e.Transport != Stdio || e.StartTimeout != 20*time.Second || e.CallTimeout != 90*time.Second || e.Problem != "" ||
		!reflect.DeepEqual(e.At, []string{"mcp", "servers", "l"}) {
		t.Errorf("V2 local: %+v", e)
	}
	if e := oc["r"]; e.Transport != HTTP || e.CallTimeout != 1500*time.Millisecond || e.StartTimeout != 20*time.Second || e.Problem != "" {
		t.Errorf("V2 remote with its own request timeout: %+v", e)
	}
	if !oc["off"].Disabled {
		t.Errorf("V2 disabled: %+v", oc["off"])
	}
	bad := byName(opencode.Read(testkit.Object(t, `{"mcp": {"servers": {"b": {"type": "local", "command": ["x"], "timeout": {"connect": 5}}}}}`), c))
	if e := bad["b"]; !strings.Contains(e.Problem, `"timeout"`) || e.ProblemAt != "timeout" {
		t.Errorf("V2 timeout mcpx cannot read: %+v", e)
	}

	v1 := byName(opencode.Read(testkit.Object(t, `{"experimental": {"mcp_timeout": 60000}, "mcp": {
		"servers": {"type": "local", "command": ["srv"], "timeout": 8000},
		"off": {"type": "local", "command": ["x"], "enabled": false}
	}}`), c))
	if e := v1["servers"]; e.Command != "srv" || e.StartTimeout != 8*time.Second || e.CallTimeout != time.Minute || e.Problem != "" {
		t.Errorf("V1 server named servers: %+v", e)
	}
	if !v1["off"].Disabled {
		t.Errorf("V1 enabled:false: %+v", v1["off"])
	}
}

// Only Claude Code keeps approvals, and only of a project's .mcp.json: the
// servers ~/.claude.json enables for that directory, less those it disables.
func TestApprovals(t *testing.T) {
	env := Env{Home: "/home/u"}
	claude := map[string]any{"projects": map[string]any{"/w": map[string]any{
		"enabledMcpjsonServers": []any{"a", "b"}, "disabledMcpjsonServers": []any{"b"},
	}}}
	var asked []string
	doc := func(p string) map[string]any { asked = append(asked, p); return claude }
	ok := ByName("claude-code").Approvals("/w/.mcp.json", env, doc)
	if ok == nil || !ok("a") || ok("b") || ok("c") {
		t.Fatalf("approvals of /w/.mcp.json: a %v, b %v, c %v", ok != nil && ok("a"), ok != nil && ok("b"), ok != nil && ok("c"))
	}
	if len(asked) != 1 || asked[0] != "/home/u/.claude.json" {
		t.Errorf("read %v, want ~/.claude.json", asked)
	}
	if ok := ByName("claude-code").Approvals("/w/.claude.json", env, doc); ok != nil {
		t.Error("approvals for a file that is not .mcp.json")
	}
	for _, h := range All {
		if h.Name != "claude-code" && h.Approvals("/w/.mcp.json", env, doc) != nil {
			t.Errorf("%s has approvals", h.Name)
		}
	}
}
