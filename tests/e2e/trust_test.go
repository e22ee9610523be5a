package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A project file's servers run only once the user trusted its current
// content: the command of an untrusted file never executes.
func TestUntrustedProjectNeverRuns(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	e := NewEnv(t)
	ran := filepath.Join(e.Root, "ran")
	cfgText := fmt.Sprintf(`{"mcpServers": {"p": {"command": "/bin/sh", "args": ["-c", %s], "env": {"MEMORY_FILE_PATH": %s}}}}`,
		jsonString("touch "+ran+"; exec "+mem), jsonString(filepath.Join(e.Root, "p.jsonl")))
	cfg := e.WriteUntrusted(filepath.Join(e.Work, ".mcp.json"), cfgText)

	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	if len(ns.Namespaces) != 1 || ns.Namespaces[0].State != api.StateUntrusted || !strings.Contains(ns.Namespaces[0].Error, "mcpx trust") {
		t.Fatalf("ls of an untrusted project: %+v", ns)
	}
	for _, args := range [][]string{{"call", "p.read_graph"}, {"refresh", "p"}, {"schema", "p"}} {
		r := e.Mcpx(args...)
		if r.Code != 4 || !strings.Contains(r.Stderr, "mcpx trust") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("untrusted %v: want exit 4 with one sentence naming `mcpx trust`: %s", args, r)
		}
	}
	e.MustOK("refresh") // refreshing everything skips what may not start
	// Listings say why the project's servers are missing, and never that
	// `mcpx refresh` (which skips them) would read them.
	for _, args := range [][]string{{"search", "read", "graph"}, {"resources"}, {"prompts"}} {
		r := e.MustOK(args...)
		if !strings.Contains(r.Stderr, "not trusted") || strings.Contains(r.Stderr, "refresh") {
			t.Errorf("untrusted %v: want a note naming the untrusted file, not `mcpx refresh`: %s", args, r)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the untrusted file's command ran")
	}

	// Trusting the directory lets it run.
	r := e.MustOK("trust")
	if !strings.Contains(r.Stdout, cfg) {
		t.Errorf("trust did not name %s: %s", cfg, r)
	}
	e.MustOK("call", "p.read_graph")
	if _, err := os.Stat(ran); err != nil {
		t.Fatal("the trusted file's command did not run")
	}
	var list struct {
		Trusted []struct{ Path, State string } `json:"trusted"`
	}
	e.JSON(&list, "trust", "--list")
	if len(list.Trusted) != 1 || list.Trusted[0].Path != cfg || list.Trusted[0].State != "current" {
		t.Errorf("trust --list: %+v", list)
	}

	// Any edit makes it untrusted again, on the very next command.
	e.WriteUntrusted(cfg, cfgText+"\n")
	if r := e.Mcpx("call", "p.read_graph"); r.Code != 4 || !strings.Contains(r.Stderr, "changed since you trusted it") {
		t.Fatalf("edited file still trusted: %s", r)
	}
	e.MustOK("trust", cfg)
	e.MustOK("call", "p.read_graph")
	e.MustOK("untrust")
	if r := e.Mcpx("call", "p.read_graph"); r.Code != 4 {
		t.Fatalf("untrusted file still runs: %s", r)
	}
	// Its tools, read while it was trusted, are not offered either.
	if r := e.MustOK("search", "read", "graph"); strings.Contains(r.Stdout, "p.read_graph") || !strings.Contains(r.Stderr, "not trusted") {
		t.Errorf("search offers an untrusted server's tools: %s", r)
	}
}

// A file writable by others, or owned by another user, is never trusted;
// another user's file is not even read.
func TestUntrustableFiles(t *testing.T) {
	e := NewEnv(t)
	cfg := e.WriteUntrusted(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, jsonString(fixtureBin)))
	if err := os.Chmod(cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	if r := e.Mcpx("trust", cfg); r.Code != 4 || !strings.Contains(r.Stderr, "writable by group or others") {
		t.Fatalf("trust of a world-writable file: %s", r)
	}
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	e.MustOK("trust", cfg)
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	if err := os.Chown(cfg, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if r := e.Mcpx("trust", cfg); r.Code != 4 || !strings.Contains(r.Stderr, "owned by uid 65534") {
		t.Fatalf("trust of a foreign file: %s", r)
	}
	// Even the trust recorded before the chown no longer holds: another
	// user's file is not read at all, and ls and call name it.
	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	if len(ns.Namespaces) != 0 || len(ns.Unavailable) != 1 || ns.Unavailable[0].Path != cfg || !strings.Contains(ns.Unavailable[0].Error, "owned by uid 65534") {
		t.Fatalf("ls of a foreign-owned project file: %+v", ns)
	}
	if r := e.Mcpx("call", "fx.echo", "text=x"); r.Code != 2 || !strings.Contains(r.Stderr, cfg+" is owned by uid 65534") {
		t.Fatalf("foreign-owned file's server called: %s", r)
	}
}

// Config edits apply on the very next command: a policy switched from allow
// to deny refuses the next call; a server just added is callable at once.
func TestConfigEditAppliesOnNextCommand(t *testing.T) {
	e := NewEnv(t)
	write := func(policy string, extra string) {
		e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "mcpx": {"policy": {"destructive": %q}}}%s
}}`, jsonString(fixtureBin), policy, extra))
	}
	write("allow", "")
	e.MustOK("call", "fx.add_note", "name=n", "text=t")
	e.MustOK("call", "fx.delete_note", "name=n")
	write("deny", "")
	if r := e.Mcpx("call", "fx.delete_note", "name=n"); r.Code != 4 {
		t.Fatalf("destructive call after allow→deny: %s", r)
	}
	write("deny", fmt.Sprintf(`,
  "added": {"command": %s}`, jsonString(fixtureBin)))
	if r := e.MustOK("call", "added.echo", "text=new"); r.Stdout != "new" {
		t.Fatalf("new server: %s", r)
	}
}

// Each server gets only its own secrets: the base set (proxies, CA
// bundles, PATH, HOME, ...) and the variables its own entry references.
func TestSecretScoping(t *testing.T) {
	e := NewEnv(t)
	e.Set("SECRET_A", "only-for-a")
	e.Set("HEADER_ONLY", "only-for-h")
	e.Set("HTTPS_PROXY", "http://proxy.example:3128")
	e.Set("no_proxy", "localhost")
	e.Set("NODE_EXTRA_CA_CERTS", "/etc/ca.pem")
	e.Set("SSL_CERT_FILE", "/etc/ssl/cert.pem")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "a": {"command": %[1]s, "env": {"TOKEN": "${SECRET_A}"}},
  "b": {"command": %[1]s},
  "h": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${HEADER_ONLY}"}}
}}`, jsonString(fixtureBin)))
	get := func(ns, name string) string {
		return strings.TrimSuffix(e.MustOK("call", ns+".env", "name="+name).Stdout, "\n")
	}
	if v := get("a", "TOKEN"); v != "only-for-a" {
		t.Errorf("a's TOKEN = %q", v)
	}
	for _, name := range []string{"SECRET_A", "HEADER_ONLY", "TOKEN"} {
		if v := get("b", name); v != "" {
			t.Errorf("server b sees %s=%q", name, v)
		}
	}
	if v := get("a", "HEADER_ONLY"); v != "" {
		t.Errorf("server a sees HEADER_ONLY=%q", v)
	}
	for name, want := range map[string]string{"HTTPS_PROXY": "http://proxy.example:3128", "no_proxy": "localhost",
		"NODE_EXTRA_CA_CERTS": "/etc/ca.pem", "SSL_CERT_FILE": "/etc/ssl/cert.pem", "HOME": e.Home} {
		if v := get("b", name); v != want {
			t.Errorf("server b: %s = %q, want %q", name, v, want)
		}
	}
}

// Config files that are not regular files never hang or feed mcpx.
func TestNonRegularConfigFiles(t *testing.T) {
	e := NewEnv(t)
	fifo := filepath.Join(e.Work, ".mcp.json")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := e.Mcpx("config", "--path")
	if r.Code == -1 {
		t.Fatalf("a FIFO .mcp.json hung the CLI: %s", r)
	}
	if strings.Contains(r.Stdout, fifo) {
		t.Errorf("a FIFO was taken as a config file: %s", r)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", fifo); err != nil {
		t.Fatal(err)
	}
	r = e.Mcpx("config", "--path")
	if r.Code == -1 || strings.Contains(r.Stdout, "/dev/zero") {
		t.Fatalf("a symlink to /dev/zero: %s", r)
	}
	r = e.Mcpx("--config", fifo, "ls")
	if r.Code != 2 {
		t.Fatalf("--config naming /dev/zero: %s", r)
	}
}

// Claude Code's approval of a project's .mcp.json servers in ~/.claude.json
// counts as trust for those servers.
func TestClaudeApprovalIsTrust(t *testing.T) {
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"ok": {"command": %[1]s}, "no": {"command": %[1]s}}}`, jsonString(fixtureBin)))
	e.WriteUntrusted(filepath.Join(e.Home, ".claude.json"), fmt.Sprintf(`{"projects": {%s: {"enabledMcpjsonServers": ["ok"], "allowedTools": []}}}`, jsonString(e.Work)))
	e.MustOK("call", "ok.echo", "text=x")
	if r := e.Mcpx("call", "no.echo", "text=x"); r.Code != 4 {
		t.Fatalf("unapproved server ran: %s", r)
	}
}

// "hosts" in the user config picks which hosts' files are read.
func TestHostsSetting(t *testing.T) {
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Home, ".cursor", "mcp.json"), fmt.Sprintf(`{"mcpServers": {"cur": {"command": %s}}}`, jsonString(fixtureBin)))
	e.WriteUntrusted(filepath.Join(e.Home, ".gemini", "settings.json"), fmt.Sprintf(`{"mcpServers": {"gem": {"command": %s}}}`, jsonString(fixtureBin)))
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), `{"hosts": ["gemini"]}`)
	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	if len(ns.Namespaces) != 1 || ns.Namespaces[0].Name != "gem" {
		t.Fatalf("hosts [gemini]: %+v", ns)
	}
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), `{"hosts": ["gemin"]}`)
	if r := e.Mcpx("ls"); r.Code != 2 || !strings.Contains(r.Stderr, `did you mean "gemini"`) {
		t.Fatalf("unknown host name: %s", r)
	}
}
