package config

import (
	"path/filepath"
	"testing"
)

// Each server's Dir is the project directory of the file that defined it
// (DESIGN §2), $HOME for user-level files and the project of a Claude Code
// local scope; a relative cwd is taken from there.
func TestServerDir(t *testing.T) {
	w := newHostWorld(t)
	p := w.proj
	files := map[string]string{
		filepath.Join(p, ".mcpx.json"):                          `{"mcpServers": {"mcpx": {"command": "x"}, "rel": {"command": "x", "cwd": "tools"}}}`,
		filepath.Join(p, ".mcpx", "config.json"):                `{"mcpServers": {"mcpxdir": {"command": "x"}}}`,
		filepath.Join(p, ".mcp.json"):                           `{"mcpServers": {"claude": {"command": "x"}}}`,
		filepath.Join(p, ".cursor", "mcp.json"):                 `{"mcpServers": {"cursor": {"command": "x"}, "curcwd": {"command": "x", "cwd": "sub"}}}`,
		filepath.Join(p, ".vscode", "mcp.json"):                 `{"servers": {"vscode": {"command": "x"}}}`,
		filepath.Join(p, ".gemini", "settings.json"):            `{"mcpServers": {"gemini": {"command": "x"}}}`,
		filepath.Join(p, "opencode.json"):                       `{"mcp": {"opencode": {"type": "local", "command": ["x"]}}}`,
		filepath.Join(p, ".codex", "config.toml"):               "[mcp_servers.codex]\ncommand = \"x\"\n",
		filepath.Join(p, ".zed", "settings.json"):               `{"context_servers": {"zed": {"command": "x"}}}`,
		filepath.Join(w.home, ".cursor", "mcp.json"):            `{"mcpServers": {"usercursor": {"command": "x"}}}`,
		filepath.Join(w.home, ".config", "mcpx", "config.json"): `{"mcpServers": {"user": {"command": "x"}, "usercwd": {"command": "x", "cwd": "bin"}, "remote": {"url": "https://x/mcp"}}}`,
		filepath.Join(w.home, ".claude.json"):                   `{"projects": {` + quote(filepath.Dir(p)) + `: {"mcpServers": {"local": {"command": "x"}}}}}`,
	}
	for path, content := range files {
		write(t, path, content)
	}
	c := w.load(t, p)
	want := map[string]string{
		"mcpx": p, "rel": p, "mcpxdir": p, "claude": p, "cursor": p, "curcwd": p, "vscode": p, "gemini": p,
		"opencode": p, "codex": p, "zed": p,
		"usercursor": w.home, "user": w.home, "usercwd": w.home,
		"local": filepath.Dir(p),
	}
	for name, dir := range want {
		s := c.Servers[name]
		if s == nil {
			t.Errorf("%s missing: %v", name, c.Names())
			continue
		}
		if s.Dir != dir {
			t.Errorf("%s: Dir = %q, want %q", name, s.Dir, dir)
		}
	}
	for name, cwd := range map[string]string{"rel": filepath.Join(p, "tools"), "curcwd": filepath.Join(p, "sub"), "usercwd": filepath.Join(w.home, "bin")} {
		exp, err := c.Servers[name].Expand(func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		if exp.Cwd != cwd {
			t.Errorf("%s: cwd = %q, want %q", name, exp.Cwd, cwd)
		}
	}
}

// Two entries that differ only in their directory are two servers: two
// hashes, so two pools and two schema snapshots. A remote server's
// identity does not depend on where its file is.
func TestServerDirIsIdentity(t *testing.T) {
	root := tempRoot(t)
	entry := `{"mcpServers": {"fs": {"command": "npx", "args": ["server-filesystem", "."]}, "r": {"url": "https://x/mcp"}}}`
	a := write(t, filepath.Join(root, "a", ".mcpx.json"), entry)
	b := write(t, filepath.Join(root, "b", ".mcpx.json"), entry)
	ca, err := loadTrusted(t, a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := loadTrusted(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Servers["fs"].Hash() == cb.Servers["fs"].Hash() {
		t.Error("the same entry in two projects hashes alike")
	}
	if ca.SchemaHash() == cb.SchemaHash() {
		t.Error("two projects' stdio servers give one schemaHash")
	}
	if ca.Servers["r"].Hash() != cb.Servers["r"].Hash() {
		t.Error("a remote server's hash depends on its file's directory")
	}
}
