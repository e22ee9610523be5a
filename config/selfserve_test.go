package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunsMcpxServe(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"mcpx", []string{"serve"}, true},
		{"/usr/local/bin/mcpx", []string{"serve", "--ns", "a"}, true},
		{"/opt/mcpx/bin/mcpxd", []string{"serve", "--expose", "search"}, true},
		{"mcpx", []string{"--json", "-C", "/p", "--config=/x.json", "serve"}, true},
		{"mcpx", []string{"--config", "serve", "ls"}, false}, // "serve" is the config file's name
		{"mcpx", []string{"call", "serve.x"}, false},
		{"mcpxd", []string{"demo-server"}, false},
		{"npx", []string{"mcpx", "serve"}, false},
		{"my-mcpx", []string{"serve"}, false},
		{"mcpx", nil, false},
	} {
		if got := runsMcpxServe(tc.cmd, tc.args); got != tc.want {
			t.Errorf("runsMcpxServe(%q, %q) = %v, want %v", tc.cmd, tc.args, got, tc.want)
		}
	}
}

func TestServedBy(t *testing.T) {
	addrs := []string{"127.0.0.1:8765", "[::]:9000"}
	for url, want := range map[string]string{
		"http://127.0.0.1:8765/mcp":        "127.0.0.1:8765",
		"http://localhost:8765/mcp/github": "127.0.0.1:8765",
		"http://[::1]:9000/mcp":            "[::]:9000",
		"http://127.0.0.1:8766/mcp":        "",
		"https://example.com:8765/mcp":     "",
		"http://127.0.0.1/mcp":             "",
	} {
		if got := servedBy(url, addrs); got != want {
			t.Errorf("servedBy(%s) = %q, want %q", url, got, want)
		}
	}
}

// An entry that is mcpx itself — `mcpx serve` as a host registers it, or
// the URL of this user's running `mcpx serve --http` — is listed as skipped
// (Self, with a Problem saying why) and warned about; other servers load.
func TestLoadSkipsSelf(t *testing.T) {
	w := newHostWorld(t)
	run := filepath.Join(w.root, "run")
	w.env["XDG_RUNTIME_DIR"] = run
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	paths, err := DefaultPaths(env(w.env))
	if err != nil {
		t.Fatal(err)
	}
	remove, err := WriteServeRecord(paths, "127.0.0.1:8765")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers": {
		"mcpx": {"command": "mcpx", "args": ["serve"]},
		"web": {"url": "http://localhost:8765/mcp"},
		"other": {"url": "http://localhost:8766/mcp"},
		"fx": {"command": "fixture"}}}`)
	c := w.load(t, w.proj)
	for _, name := range []string{"mcpx", "web"} {
		s := c.Servers[name]
		if s == nil || !s.Self || !strings.Contains(s.Problem, "mcpx never serves itself") {
			t.Errorf("%s: %+v", name, s)
		}
		if !strings.Contains(strings.Join(c.Warnings, "\n"), `server "`+name+`"`) {
			t.Errorf("no warning about %s: %q", name, c.Warnings)
		}
	}
	for _, name := range []string{"other", "fx"} {
		if s := c.Servers[name]; s == nil || s.Self || s.Problem != "" {
			t.Errorf("%s: %+v", name, s)
		}
	}
	stamp := c.Stamp
	// Once that serve process is gone, its URL is an ordinary server
	// again, and the configuration's stamp says so (the daemon reloads).
	remove()
	c = w.load(t, w.proj)
	if s := c.Servers["web"]; s.Self || s.Problem != "" || c.Stamp == stamp {
		t.Errorf("after serve exited: %+v", s)
	}
}
