package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// hostWorld is a HOME with host files and a project under it.
type hostWorld struct {
	root, home, proj string
	env              map[string]string
	store            *TrustStore
}

func newHostWorld(t *testing.T) *hostWorld {
	root := tempRoot(t)
	w := &hostWorld{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "work", "proj")}
	w.env = map[string]string{"HOME": w.home, "XDG_STATE_HOME": filepath.Join(root, "state")}
	if err := os.MkdirAll(w.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	w.store = DefaultTrustStore(env(w.env))
	return w
}

func (w *hostWorld) load(t *testing.T, dir string) *Config {
	t.Helper()
	c, err := LoadDir(dir, env(w.env), "/usr/bin/mcpx")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDiscoverHosts(t *testing.T) {
	w := newHostWorld(t)
	cur := write(t, filepath.Join(w.proj, ".cursor", "mcp.json"), `{}`)
	vsc := write(t, filepath.Join(w.proj, ".vscode", "mcp.json"), `{}`)
	mcp := write(t, filepath.Join(w.proj, ".mcp.json"), `{}`)
	cdx := write(t, filepath.Join(w.proj, ".codex", "config.toml"), ``)
	claude := write(t, filepath.Join(w.home, ".claude.json"), `{"projects": {`+quote(w.proj)+`: {"mcpServers": {"l": {"command": "x"}}}}}`)
	gem := write(t, filepath.Join(w.home, ".gemini", "settings.json"), `{}`)
	zed := write(t, filepath.Join(w.home, ".config", "zed", "settings.json"), `{}`)
	got, err := Discover(w.proj, env(w.env))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{mcp, cur, vsc, cdx, claude + "#" + w.proj, claude, gem, zed}
	if got := under(w.root, got); !reflect.DeepEqual(got, want) {
		t.Errorf("sources =\n%q\nwant\n%q", got, want)
	}
	// "hosts" in the user file picks hosts.
	write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"hosts": ["cursor", "zed"]}`)
	got, _ = Discover(w.proj, env(w.env))
	want = []string{cur, filepath.Join(w.home, ".config", "mcpx", "config.json"), zed}
	if got := under(w.root, got); !reflect.DeepEqual(got, want) {
		t.Errorf("with hosts: sources =\n%q\nwant\n%q", got, want)
	}
	write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"hosts": ["cursr"]}`)
	var pe *ParseError
	if _, err := Discover(w.proj, env(w.env)); !errors.As(err, &pe) || !strings.Contains(err.Error(), `did you mean "cursor"`) {
		t.Errorf("unknown host: %v", err)
	}
}

func TestHostFileLeniency(t *testing.T) {
	w := newHostWorld(t)
	write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers": {"a": {"command": "x"}, "b": {"command": 5}}}`)
	write(t, filepath.Join(w.home, ".gemini", "settings.json"), `{"mcpServers": {`)
	write(t, filepath.Join(w.home, ".codex", "config.toml"), "[mcp_servers.c]\ncommand = \n")
	c := w.load(t, w.proj)
	if c.Servers["a"] == nil || c.Servers["a"].Problem != "" || c.Servers["b"] == nil || c.Servers["b"].Problem == "" {
		t.Fatalf("servers: %+v", c.Servers)
	}
	warn := strings.Join(c.Warnings, "\n")
	for _, want := range []string{".gemini/settings.json:1:", ".codex/config.toml:2:", `server "b"`} {
		if !strings.Contains(warn, want) {
			t.Errorf("warnings lack %q:\n%s", want, warn)
		}
	}
	if !c.Servers["a"].trusted() {
		t.Error("user-level file not trusted")
	}
}

func (s *Server) trusted() bool { return s.Untrusted == "" }

func TestTrustAndShadowing(t *testing.T) {
	w := newHostWorld(t)
	proj := write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"s": {"command": "proj"}}, "mcpx": {"policy": {"destructive": "allow"}}}`)
	write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers": {"s": {"command": "user"}, "u": {"command": "u"}}}`)
	c := w.load(t, w.proj)
	// Untrusted, the nearer file shadows nothing: the user's s keeps its
	// name, and the project's is a row of its own saying why it is inert.
	if s := c.Servers["s"]; s.Command != "user" || s.Untrusted != "" {
		t.Fatalf("the user's s under an untrusted project file: %+v", s)
	}
	if s := c.Servers["s (untrusted)"]; s == nil || s.Command != "proj" || s.Name != "s (untrusted)" || !strings.Contains(s.Untrusted, "mcpx trust "+proj) {
		t.Fatalf("untrusted project server: %+v", s)
	}
	if c.Settings.Policy.Destructive != PolicyConfirm {
		t.Error("an untrusted file's top-level mcpx block applied")
	}
	if len(c.Shadowed) != 0 {
		t.Errorf("shadowed = %+v", c.Shadowed)
	}
	stamp := c.Stamp
	if _, err := w.store.TrustFile(proj); err != nil {
		t.Fatal(err)
	}
	// Trusted, its entry replaces the inherited one.
	c = w.load(t, w.proj)
	if s := c.Servers["s"]; s.Command != "proj" || s.Untrusted != "" || c.Settings.Policy.Destructive != PolicyAllow || c.Stamp == stamp {
		t.Fatalf("trusted: %+v stamp %s", c.Servers["s"], c.Stamp)
	}
	if _, ok := c.Servers["s (untrusted)"]; ok || len(c.Shadowed) != 1 || c.Shadowed[0].Name != "s" || c.Shadowed[0].By != proj {
		t.Errorf("trusted: servers %v, shadowed = %+v", c.Names(), c.Shadowed)
	}
	// A trust record writable by others is not believed.
	recs, _ := os.ReadDir(w.store.Dir)
	for _, r := range recs {
		if err := os.Chmod(filepath.Join(w.store.Dir, r.Name()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if s := w.load(t, w.proj).Servers["s"]; s.Command != "user" {
		t.Error("a group/other-writable trust record was believed")
	}
}

func TestClaudeApprovalTrustsMcpJson(t *testing.T) {
	w := newHostWorld(t)
	write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"ok": {"command": "a"}, "no": {"command": "b"}}}`)
	write(t, filepath.Join(w.home, ".claude.json"), `{"projects": {`+quote(w.proj)+`: {"enabledMcpjsonServers": ["ok"]}}}`)
	c := w.load(t, w.proj)
	if c.Servers["ok"].Untrusted != "" || c.Servers["no"].Untrusted == "" {
		t.Errorf("approvals: ok=%q no=%q", c.Servers["ok"].Untrusted, c.Servers["no"].Untrusted)
	}
}

func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := ReadFile(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(zero); !errors.Is(err, ErrNotRegular) {
		t.Errorf("/dev/zero: %v", err)
	}
	big := write(t, filepath.Join(dir, "big.json"), strings.Repeat(" ", MaxConfigSize+1))
	if _, err := ReadFile(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: %v", err)
	}
	if _, ok := readableFile(fifo); ok {
		t.Error("discovery took a FIFO")
	}
}
