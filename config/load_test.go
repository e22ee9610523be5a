package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadFormats(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Server // Name, Command, Args, Env, URL, Transport, Headers, Cwd compared
		off  bool   // disabled: absent from Servers
	}{
		{"claude stdio", `{"mcpServers": {"s": {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "/w"}}}`,
			Server{Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"K": "v"}, Cwd: "/w", Transport: TransportStdio}, false},
		{"claude code http type", `{"mcpServers": {"s": {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}}}}`,
			Server{URL: "https://h/mcp", Headers: map[string]string{"A": "b"}, Transport: TransportHTTP}, false},
		{"claude code streamable-http", `{"mcpServers": {"s": {"type": "streamable-http", "url": "https://h/mcp"}}}`,
			Server{URL: "https://h/mcp", Transport: TransportHTTP}, false},
		{"claude code sse", `{"mcpServers": {"s": {"type": "sse", "url": "https://h/sse"}}}`,
			Server{URL: "https://h/sse", Transport: TransportSSE}, false},
		{"claude code stdio type", `{"mcpServers": {"s": {"type": "stdio", "command": "x"}}}`,
			Server{Command: "x", Transport: TransportStdio}, false},
		{"mcpx transport key", `{"mcpServers": {"s": {"transport": "sse", "url": "https://h/sse"}}}`,
			Server{URL: "https://h/sse", Transport: TransportSSE}, false},
		{"url without type is http", `{"mcpServers": {"s": {"url": "https://h/mcp"}}}`,
			Server{URL: "https://h/mcp", Transport: TransportHTTP}, false},
		{"vscode stdio", `{"servers": {"s": {"type": "stdio", "command": "uvx", "args": ["m"]}}, "inputs": []}`,
			Server{Command: "uvx", Args: []string{"m"}, Transport: TransportStdio}, false},
		{"vscode http", `{"servers": {"s": {"type": "http", "url": "https://h"}}}`,
			Server{URL: "https://h", Transport: TransportHTTP}, false},
		{"opencode local", `{"$schema": "https://opencode.ai/config.json", "mcp": {"s": {"type": "local", "command": ["npx", "-y", "pkg"], "environment": {"K": "v"}}}}`,
			Server{Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"K": "v"}, Transport: TransportStdio}, false},
		{"opencode remote", `{"mcp": {"s": {"type": "remote", "url": "https://h", "headers": {"A": "b"}, "enabled": true}}}`,
			Server{URL: "https://h", Headers: map[string]string{"A": "b"}, Transport: TransportHTTP}, false},
		{"opencode disabled", `{"mcp": {"s": {"type": "local", "command": ["x"], "enabled": false}}}`, Server{}, true},
		{"mcpx disabled", `{"mcpServers": {"s": {"command": "x", "mcpx": {"disabled": true}}}}`, Server{}, true},
		{"other tools' keys ignored", `{"globalShortcut": "x", "theme": 1, "mcpx": null, "mcpServers": {"s": {"command": "x"}}}`,
			Server{Command: "x", Transport: TransportStdio}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadString(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := c.Servers["s"]
			if tt.off {
				if ok || len(c.Servers) != 0 {
					t.Fatalf("disabled server present: %v", c.Names())
				}
				return
			}
			if !ok {
				t.Fatalf("server missing; have %v", c.Names())
			}
			got := Server{Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Transport: s.Transport, Headers: s.Headers}
			if len(got.Args) == 0 {
				got.Args = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("server = %+v\nwant %+v", got, tt.want)
			}
			if s.Name != "s" || s.Source != c.Sources[0] || len(c.Warnings) != 0 {
				t.Errorf("name %q source %q warnings %q", s.Name, s.Source, c.Warnings)
			}
		})
	}
}

func TestLoadDefaults(t *testing.T) {
	c, err := loadString(t, `{"mcpServers": {"s": {"command": "x"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Sharing: SharingShared, Scope: ScopeGlobal, Max: DefaultMax,
		IdleTimeout: Duration(5 * time.Minute), CallTimeout: Duration(120 * time.Second), StartTimeout: Duration(30 * time.Second),
		Policy: Policy{Destructive: PolicyConfirm, Unannotated: PolicyAllow},
	}
	if got := c.Servers["s"].Options; !reflect.DeepEqual(got, want) {
		t.Errorf("options = %+v\nwant %+v", got, want)
	}
	st := c.Settings
	if st.IdleExit.D() != 15*time.Minute || st.Cache.MaxBytes != 1<<30 || st.Cache.MaxAge.D() != 30*24*time.Hour ||
		st.Policy != want.Policy || !reflect.DeepEqual(st.Defaults, want) {
		t.Errorf("settings = %+v", st)
	}
	if c.Builtin {
		t.Error("Builtin set for a real config")
	}
}

func TestLoadBuiltin(t *testing.T) {
	c, err := Load(nil, "/opt/mcpx")
	if err != nil {
		t.Fatal(err)
	}
	d := c.Servers["demo"]
	if !c.Builtin || len(c.Servers) != 1 || d == nil || d.Command != "/opt/mcpx" || !reflect.DeepEqual(d.Args, []string{"demo-server"}) ||
		d.Transport != TransportStdio || d.Options.Description != DemoDescription || c.DaemonKey() != BuiltinKey {
		t.Fatalf("builtin = %+v, server %+v", c, d)
	}
	if string(d.Raw) != `{"args":["demo-server"],"command":"/opt/mcpx"}` {
		t.Errorf("raw = %s", d.Raw)
	}
	if d.Options.CallTimeout.D() != DefaultCallTimeout || c.Settings.IdleExit.D() != DefaultIdleExit {
		t.Errorf("builtin defaults missing: %+v %+v", d.Options, c.Settings)
	}
	// The built-in server is the same server as one written in a config
	// file, whatever the path holds: its hash keys the pools and the cache.
	// (A file's server also runs in its project directory, which is part
	// of its identity; the built-in one has none.)
	for _, self := range []string{"/opt/mcpx", `/a "b"/<c>&d`, "/é/\\x", "/t\tab\u2028", "/x<y>&z", "/bad\xff/utf8", "/two\xff\xfe\xc3"} {
		cmd, _ := json.Marshal(self)
		file := write(t, filepath.Join(tempRoot(t), ".mcp.json"), `{"mcpServers": {"demo": {"command": `+string(cmd)+`, "args": ["demo-server"]}}}`)
		fromFile, err := Load([]string{file}, "/unused")
		if err != nil {
			t.Fatal(err)
		}
		fromFile.Servers["demo"].Dir = ""
		if got, want := Builtin(self).Servers["demo"].Hash(), fromFile.Servers["demo"].Hash(); got != want {
			t.Errorf("Builtin(%q) hashes to %s, from a file to %s", self, got, want)
		}
	}
}

func TestLoadMerge(t *testing.T) {
	root := tempRoot(t)
	near := write(t, filepath.Join(root, "p", ".mcpx.json"), `{
		"mcpServers": {
			"both": {"command": "near", "mcpx": {"callTimeout": "5s"}},
			"gone": {"mcpx": {"disabled": true}},
			"own": {"command": "own"}
		},
		"mcpx": {"sharing": "exclusive", "cache": {"maxAge": "2d"}, "policy": {"destructive": "deny"}}
	}`)
	far := write(t, filepath.Join(root, ".mcp.json"), `{
		"mcpServers": {
			"both": {"command": "far", "args": ["a"], "mcpx": {"scope": "cwd", "max": 9}},
			"gone": {"command": "inherited"},
			"kept": {"command": "kept", "mcpx": {"sharing": "shared"}}
		},
		"mcpx": {"sharing": "shared", "scope": "session", "idleExit": 60, "cache": {"maxBytes": "2MiB", "maxAge": "9d"},
		         "policy": {"unannotated": "confirm"}, "callTimeout": "1m"}
	}`)
	c, err := loadTrusted(t, near, far)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Names(), ","); got != "both,kept,own" {
		t.Fatalf("names = %s", got)
	}
	both := c.Servers["both"]
	if both.Command != "near" || len(both.Args) != 0 || both.Source != near {
		t.Errorf("nearer entry must win whole: %+v", both)
	}
	// Own block over merged top-level (near wins per key, far fills) over built-ins.
	wantBoth := Options{Sharing: SharingExclusive, Scope: ScopeSession, Max: DefaultMax, IdleTimeout: Duration(DefaultIdleTimeout),
		CallTimeout: Duration(5 * time.Second), StartTimeout: Duration(DefaultStartTimeout),
		Policy: Policy{Destructive: PolicyDeny, Unannotated: PolicyConfirm}}
	if !reflect.DeepEqual(both.Options, wantBoth) {
		t.Errorf("both options = %+v\nwant %+v", both.Options, wantBoth)
	}
	kept := c.Servers["kept"].Options
	if kept.Sharing != SharingShared || kept.CallTimeout.D() != time.Minute || kept.Scope != ScopeSession {
		t.Errorf("kept options = %+v", kept)
	}
	st := c.Settings
	if st.IdleExit.D() != time.Minute || st.Cache.MaxBytes != 2<<20 || st.Cache.MaxAge.D() != 48*time.Hour ||
		st.Policy != (Policy{Destructive: PolicyDeny, Unannotated: PolicyConfirm}) || st.Defaults.Sharing != SharingExclusive {
		t.Errorf("settings = %+v", st)
	}
	if !reflect.DeepEqual(c.Sources, []string{near, far}) {
		t.Errorf("sources = %q", c.Sources)
	}
}

func TestLoadDisabledLeavesNothingToServe(t *testing.T) {
	c, err := loadString(t, `{"mcpServers": {"a": {"mcpx": {"disabled": true}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 0 || c.Builtin {
		t.Errorf("servers = %v builtin = %v", c.Names(), c.Builtin)
	}
}

func TestUnknownKeys(t *testing.T) {
	t.Run("server entry key is a warning", func(t *testing.T) {
		c, err := loadString(t, "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n  \"arsg\": [\"1\"], \"envFile\": \"x\"}}}")
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Warnings) != 2 {
			t.Fatalf("warnings = %q", c.Warnings)
		}
		w := c.Warnings[0]
		for _, want := range []string{".mcpx.json:2:3:", `server "a"`, `"arsg"`, "accepted: args, command, cwd, env, headers, mcpx, transport, type, url", `did you mean "args"?`} {
			if !strings.Contains(w, want) {
				t.Errorf("warning %q lacks %q", w, want)
			}
		}
		if strings.Contains(c.Warnings[1], "did you mean") {
			t.Errorf("no near match expected: %q", c.Warnings[1])
		}
		if c.Servers["a"] == nil {
			t.Error("server dropped for a warning")
		}
	})
	tests := []struct {
		name, src string
		line, col int
		contains  []string
	}{
		{"server mcpx block", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"mcpx\": {\n \"sharng\": \"shared\"}}}}", 2, 2,
			[]string{`server "a": mcpx block`, `unknown key "sharng"`, "accepted: auth, callTimeout, description, disabled, excludeTools, idleTimeout, max, maxMessageBytes, policy, roots, scope, sharing, startTimeout, tools", `did you mean "sharing"?`}},
		{"top-level block", "{\"mcpx\": {\"idleExt\": \"1m\"}}", 1, 11,
			[]string{"top-level mcpx block", `"idleExt"`, "accepted: cache, callTimeout, idleExit", `did you mean "idleExit"?`}},
		{"server-only key at top level", "{\"mcpx\": {\"disabled\": true}}", 1, 11, []string{`unknown key "disabled"`}},
		{"policy", "{\"mcpx\": {\"policy\": {\"destrutive\": \"deny\"}}}", 1, 22, []string{"mcpx.policy", "accepted: destructive, unannotated", `did you mean "destructive"?`}},
		{"cache", "{\"mcpx\": {\"cache\": {\"bytes\": 1}}}", 1, 21, []string{"mcpx.cache", "accepted: maxAge, maxBytes"}},
		{"disabled entry still checked", "{\"mcpServers\": {\"a\": {\"mcpx\": {\"disabled\": true, \"zzzzzz\": 1}}}}", 1, 50, []string{`"zzzzzz"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.src)
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("err = %v, want *ParseError of kind ErrUnknownKey", err)
			}
			if pe.Line != tt.line || pe.Col != tt.col {
				t.Errorf("position %d:%d, want %d:%d", pe.Line, pe.Col, tt.line, tt.col)
			}
			for _, want := range tt.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name, src string
		kind      error
		contains  []string
	}{
		{"sharing", `{"mcpServers": {"a": {"command": "x", "mcpx": {"sharing": "shard"}}}}`, ErrInvalidValue,
			[]string{`server "a": mcpx.sharing: "shard" is not accepted (accepted: shared, exclusive); did you mean "shared"?`}},
		{"scope", `{"mcpServers": {"a": {"command": "x", "mcpx": {"scope": "process"}}}}`, ErrInvalidValue,
			[]string{"mcpx.scope", "accepted: global, cwd, session, call"}},
		{"policy destructive", `{"mcpx": {"policy": {"destructive": "ask"}}}`, ErrInvalidValue, []string{"mcpx.policy.destructive", "confirm, allow, deny"}},
		{"policy unannotated", `{"mcpServers": {"a": {"command": "x", "mcpx": {"policy": {"unannotated": "deny"}}}}}`, ErrInvalidValue,
			[]string{`server "a": mcpx.policy.unannotated`, "accepted: allow, confirm"}},
		{"max zero", `{"mcpx": {"max": 0}}`, ErrInvalidValue, []string{"mcpx.max", "at least 1"}},
		{"max fraction", `{"mcpx": {"max": 1.5}}`, ErrType, []string{"mcpx.max", "whole number"}},
		{"duration text", `{"mcpx": {"idleExit": "soon"}}`, ErrInvalidValue, []string{"mcpx.idleExit", `"30s"`}},
		{"duration negative", `{"mcpServers": {"a": {"command": "x", "mcpx": {"callTimeout": -1}}}}`, ErrInvalidValue, []string{"mcpx.callTimeout", "positive"}},
		{"duration type", `{"mcpx": {"startTimeout": true}}`, ErrType, []string{"mcpx.startTimeout"}},
		{"cache size", `{"mcpx": {"cache": {"maxBytes": "lots"}}}`, ErrInvalidValue, []string{"mcpx.cache.maxBytes", "512MiB"}},
		{"bad regexp", `{"mcpServers": {"a": {"command": "x", "mcpx": {"tools": ["ok", "/(/"]}}}}`, ErrInvalidValue, []string{"mcpx.tools", "regexp"}},
		{"bad glob", `{"mcpServers": {"a": {"command": "x", "mcpx": {"excludeTools": ["[a"]}}}}`, ErrInvalidValue, []string{"mcpx.excludeTools", "glob"}},
		{"duplicate across maps", `{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}`, ErrInvalidValue, []string{"both \"mcpServers\" and \"servers\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.src)
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want *ParseError of kind %v", err, tt.kind)
			}
			if !strings.HasSuffix(pe.File, ".mcpx.json") || pe.Line != 1 || pe.Col < 2 {
				t.Errorf("position %s:%d:%d", pe.File, pe.Line, pe.Col)
			}
			for _, want := range tt.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// An entry mcpx cannot use is that entry's Problem, "FILE:LINE:COL: what"
// (with a warning), not the file's error: its siblings load.
func TestEntryProblems(t *testing.T) {
	tests := []struct {
		name, entry string
		col         int // of the finding, on the entry's line
		contains    []string
	}{
		{"neither command nor url", `{"args": ["x"]}`, 1, []string{`needs a "command" (stdio) or a "url" (http, sse)`}},
		{"windsurf serverUrl", `{"serverUrl": "https://h/mcp"}`, 1, []string{`needs a "command"`, `"serverUrl" is Windsurf's spelling, write "url" here`}},
		{"gemini httpUrl", `{"httpUrl": "https://h/mcp"}`, 1, []string{`"httpUrl" is Gemini CLI's spelling`}},
		{"both command and url", `{"command": "x", "url": "http://h"}`, 1, []string{`has both "command" and "url"`}},
		{"type mismatch", `{"type": "http", "command": "x"}`, 10, []string{`transport http needs a "url"`}},
		{"stdio with url", `{"type": "stdio", "url": "http://h"}`, 10, []string{`transport stdio needs a "command"`}},
		{"unknown type", `{"type": "websocket", "url": "ws://h"}`, 10, []string{`type: "websocket" is not accepted (accepted: stdio, http, streamable-http, sse)`}},
		{"url not http", `{"url": "ws://h/mcp"}`, 9, []string{`url: "ws://h/mcp" is not an http:// or https:// URL`}},
		{"not an object", `["npx"]`, 1, []string{`the entry must be an object, not ["npx"]`}},
		{"args not strings", `{"command": "x", "args": "-y pkg"}`, 26, []string{`args: want an array of strings, not "-y pkg"`}},
		{"unknown variable form", `{"command": "x", "args": ["${workspaceFolder}/a", "${command:y}"]}`, 51, []string{`args[1]: ${command:y} is not a variable form mcpx knows`, `$${`}},
		{"unknown form in a header", `{"url": "https://h", "headers": {"A": "${ X }"}}`, 39, []string{`headers.A: ${ X } is not a variable form`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "{\"mcpServers\": {\n\"ok\": {\"command\": \"x\"},\n\"a\": " + tt.entry + "}}"
			c, err := loadString(t, src)
			if err != nil {
				t.Fatalf("an entry problem failed the file: %v", err)
			}
			if ok := c.Servers["ok"]; ok == nil || ok.Problem != "" || ok.Transport != TransportStdio {
				t.Fatalf("sibling did not load: %+v", ok)
			}
			checkEntryProblem(t, c, c.Servers["a"], 6+tt.col-1, tt.contains)
			// Its variables are not captured for it.
			if vars := c.Vars(); len(vars) != 0 {
				t.Errorf("vars of an unusable entry captured: %v", vars)
			}
		})
	}
	// A disabled entry needs nothing more, and removes the name.
	c, err := loadString(t, `{"mcpServers": {"a": {"args": 5, "mcpx": {"disabled": true}}}}`)
	if err != nil || len(c.Servers) != 0 || len(c.Warnings) != 0 {
		t.Errorf("disabled unusable entry: %v %v %q", err, c.Names(), c.Warnings)
	}
	// The entry's mcpx block stays strict even when the entry is unusable.
	_, err = loadString(t, `{"mcpServers": {"a": {"args": 5, "mcpx": {"sharng": "shared"}}}}`)
	if !errors.Is(err, ErrUnknownKey) {
		t.Errorf("mcpx block of an unusable entry: %v", err)
	}
	// Known forms still load.
	c, err = loadString(t, `{"mcpServers": {"a": {"command": "x", "args": ["${A}", "${B:-d}", "${env:C}", "${input:d-1}", "$${lit}", "${open", "$HOME"]}}}`)
	if err != nil || c.Servers["a"].Problem != "" {
		t.Errorf("known forms: %v %q", err, c.Servers["a"].Problem)
	}
}

// checkEntryProblem: a, on line 3 of its file, has the problem "FILE:3:COL:
// …" with each of contains, without its own name (whoever shows it says
// that), a warning saying it is not started, and no transport.
func checkEntryProblem(t *testing.T, c *Config, a *Server, col int, contains []string) {
	t.Helper()
	if a == nil || a.Problem == "" {
		t.Fatalf("server a: %+v", a)
	}
	if want := fmt.Sprintf("%s:3:%d: ", c.Sources[0], col); !strings.HasPrefix(a.Problem, want) {
		t.Errorf("problem %q, want prefix %q", a.Problem, want)
	}
	for _, want := range contains {
		if !strings.Contains(a.Problem, want) {
			t.Errorf("problem %q lacks %q", a.Problem, want)
		}
	}
	if strings.Contains(a.Problem, `server "a"`) {
		t.Errorf("problem %q repeats the server's name", a.Problem)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool {
		return strings.Contains(w, `server "a": `) && strings.Contains(w, "it is not started") && strings.HasPrefix(w, c.Sources[0]+":3:")
	}) {
		t.Errorf("no warning for the entry: %q", c.Warnings)
	}
	if a.Transport != "" {
		t.Errorf("unusable entry has transport %q", a.Transport)
	}
}

// An unusable entry is still a definition: it shadows a farther one of the
// same name rather than silently falling back to it.
func TestEntryProblemShadows(t *testing.T) {
	root := tempRoot(t)
	near := write(t, filepath.Join(root, "p", ".mcpx.json"), `{"mcpServers": {"a": {"command": 5}, "b": {"command": "b"}}}`)
	far := write(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"a": {"command": "far"}}}`)
	c, err := loadTrusted(t, near, far)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Servers["a"]; a == nil || a.Source != near || !strings.HasPrefix(a.Problem, near+":1:34: command: want a string") {
		t.Fatalf("a = %+v", a)
	}
	if len(c.Shadowed) != 1 || c.Shadowed[0] != (Shadow{Name: "a", Source: far, By: near}) {
		t.Errorf("shadowed = %+v", c.Shadowed)
	}
	if b := c.Servers["b"]; b == nil || b.Problem != "" {
		t.Errorf("b = %+v", b)
	}
}

// The shape of the file stays strict: a server map that is not an object.
func TestServerMapShape(t *testing.T) {
	_, err := loadString(t, "{\"mcpServers\": {\"a\": {\"command\": \"x\"}},\n \"servers\": \"x\"}")
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrType) || pe.Line != 2 || pe.Col != 13 || !strings.Contains(pe.Msg, `"servers" must be an object of servers`) {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadMissingSource(t *testing.T) {
	if _, err := Load([]string{filepath.Join(tempRoot(t), "nope.json")}, "/x"); err == nil {
		t.Fatal("no error for a missing source")
	}
}
