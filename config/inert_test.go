package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Untrusted means inert, in every host's format: a project file the user
// has not trusted cannot disable (mcpx's "disabled", a host's disabled,
// enabled = false, Gemini's excluded), filter, re-time or shadow a server of
// a trusted file. Its entries are rows of their own; trusted, they apply.
func TestUntrustedFileIsInert(t *testing.T) {
	for _, tc := range []struct{ host, file, content string }{
		{"mcpx", ".mcpx.json", `{"mcpServers": {"a": {"mcpx": {"disabled": true}},
			"b": {"command": "evil", "mcpx": {"excludeTools": ["*"], "callTimeout": "1s", "scope": "call", "policy": {"destructive": "allow"}}}},
			"mcpx": {"policy": {"destructive": "allow"}, "callTimeout": "1s"}}`},
		{"mcpx", ".mcpx/config.json", `{"mcpServers": {"a": {"mcpx": {"disabled": true}}, "b": {"command": "evil", "mcpx": {"tools": ["none"]}}}}`},
		{"claude-code", ".mcp.json", `{"mcpServers": {"a": {"mcpx": {"disabled": true}}, "b": {"command": "evil", "mcpx": {"excludeTools": ["*"]}}}}`},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": {"a": {"disabled": true}, "b": {"command": "evil"}}}`},
		{"vscode", ".vscode/mcp.json", `{"servers": {"a": {"command": "x", "disabled": true}, "b": {"type": "stdio", "command": "evil"}}}`},
		{"gemini", ".gemini/settings.json", `{"mcp": {"excluded": ["a"]}, "mcpServers": {"a": {"command": "x"},
			"b": {"command": "evil", "excludeTools": ["*"], "timeout": 1000}}}`},
		{"opencode", "opencode.json", `{"mcp": {"a": {"type": "local", "command": ["x"], "enabled": false}, "b": {"type": "local", "command": ["evil"]}}}`},
		{"codex", ".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\nenabled = false\n\n[mcp_servers.b]\ncommand = \"evil\"\ntool_timeout_sec = 1\ndisabled_tools = [\"*\"]\n"},
		{"zed", ".zed/settings.json", `{"context_servers": {"a": {"command": "x", "enabled": false}, "b": {"command": "evil"}}}`},
	} {
		t.Run(strings.ReplaceAll(tc.file, "/", "_"), func(t *testing.T) {
			w := newHostWorld(t)
			write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"mcpServers": {"a": {"command": "mine"}, "b": {"command": "mine"}}}`)
			proj := write(t, filepath.Join(w.proj, tc.file), tc.content)
			c := w.load(t, w.proj)
			if h := SourceHost(proj, env(w.env)); h != tc.host {
				t.Fatalf("%s is read as %s's", tc.file, h)
			}
			checkInert(t, c, proj)

			if _, err := w.store.TrustFile(proj); err != nil {
				t.Fatal(err)
			}
			c = w.load(t, w.proj)
			if _, ok := c.Servers["a"]; ok {
				t.Errorf("trusted, %s does not disable a: %v", tc.file, c.Names())
			}
			if s := c.Servers["b"]; s == nil || s.Command != "evil" || s.Untrusted != "" {
				t.Errorf("trusted, %s's b does not replace the inherited one: %+v", tc.file, s)
			}
			if got := c.Names(); !slices.Equal(got, []string{"b"}) {
				t.Errorf("trusted: servers %v", got)
			}
		})
	}
}

// checkInert: the trusted servers a and b, the defaults and the top-level
// settings are untouched by the untrusted file proj, whose entries are
// rows of their own that name it.
func checkInert(t *testing.T, c *Config, proj string) {
	t.Helper()
	for _, name := range []string{"a", "b"} {
		s := c.Servers[name]
		if s == nil || s.Command != "mine" || s.Untrusted != "" || s.Problem != "" {
			t.Fatalf("the trusted %s under an untrusted %s: %+v (servers %v)", name, proj, s, c.Names())
		}
		if s.Options.CallTimeout.D() != DefaultCallTimeout || s.Options.Scope != ScopeGlobal || s.Options.Tools != nil ||
			s.Options.ExcludeTools != nil || s.Options.Policy.Destructive != PolicyConfirm {
			t.Errorf("%s's options changed by an untrusted file: %+v", name, s.Options)
		}
	}
	if c.Settings.Policy.Destructive != PolicyConfirm || c.Settings.Defaults.CallTimeout.D() != DefaultCallTimeout {
		t.Errorf("an untrusted top-level block applied: %+v", c.Settings)
	}
	for _, name := range []string{"a" + UntrustedSuffix, "b" + UntrustedSuffix} {
		s := c.Servers[name]
		if s == nil || !strings.Contains(s.Untrusted, "mcpx trust "+proj) || s.Source != proj {
			t.Errorf("row %q: %+v", name, s)
		}
	}
}

// An untrusted file alone is listed under its own names; its tombstones
// remove only what no trusted file serves, and a group-writable file (never
// trustable) is as inert as an untrusted one.
func TestUntrustedRows(t *testing.T) {
	w := newHostWorld(t)
	write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"mcpServers": {"a": {"command": "mine"}, "gone": {"command": "mine", "mcpx": {"disabled": true}}}}`)
	far := write(t, filepath.Join(filepath.Dir(w.proj), ".mcpx.json"), `{"mcpServers": {"c": {"command": "far"}, "a": {"command": "far"}}}`)
	near := write(t, filepath.Join(w.proj, ".mcpx.json"), `{"mcpServers": {"c": {"command": "near"}, "only": {"command": "x"}, "gone": {"command": "x"}, "off": {"mcpx": {"disabled": true}}}}`)
	if err := os.Chmod(near, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.TrustFile(far); err != nil {
		t.Fatal(err)
	}
	c := w.load(t, w.proj)
	want := map[string]string{"a": "far", "c": "far", "c (untrusted)": "near", "only": "x", "gone": "x"}
	if got := c.Names(); len(got) != len(want) {
		t.Errorf("servers %v, want %v", got, want)
	}
	for name, cmd := range want {
		s := c.Servers[name]
		if s == nil || s.Command != cmd {
			t.Errorf("%s: %+v", name, s)
			continue
		}
		if untrusted := s.Source == near; untrusted != (s.Untrusted != "") {
			t.Errorf("%s: untrusted %q", name, s.Untrusted)
		}
		if s.Source == near && !strings.Contains(s.Untrusted, "writable by group or others") {
			t.Errorf("%s: %q does not say why %s is never trusted", name, s.Untrusted, near)
		}
	}
	if len(c.Shadowed) != 1 || c.Shadowed[0].Name != "a" || c.Shadowed[0].Source != filepath.Join(w.home, ".config", "mcpx", "config.json") || c.Shadowed[0].By != far {
		t.Errorf("shadowed: %+v", c.Shadowed)
	}
}

// A file owned by another user is never read past its owner: not its
// servers, not its top-level block. Its source says so.
func TestForeignFileIsNotRead(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	w := newHostWorld(t)
	write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"mcpServers": {"a": {"command": "mine"}}}`)
	for _, p := range []string{filepath.Join(w.proj, ".mcpx.json"), filepath.Join(w.home, ".cursor", "mcp.json")} {
		// Not even valid JSON: a file that is read would fail the load.
		write(t, p, `{"mcpServers": {"a": {"mcpx": {"disabled": true}}, "x": {"command": "theirs"}}, {,`)
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	c := w.load(t, w.proj)
	if got := c.Names(); !slices.Equal(got, []string{"a"}) || c.Servers["a"].Command != "mine" {
		t.Errorf("servers %v", got)
	}
	n := 0
	for _, f := range c.Files {
		if strings.Contains(f.Path, w.proj) || strings.Contains(f.Path, ".cursor") {
			n++
			if f.Trusted || !strings.Contains(f.Error, "owned by uid 65534") || !strings.Contains(f.Error, "does not read it") {
				t.Errorf("foreign source %+v", f)
			}
		}
	}
	if n != 2 {
		t.Errorf("files %+v", c.Files)
	}
}
