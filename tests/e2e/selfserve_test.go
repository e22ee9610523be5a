package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// mcpx never serves itself: `mcpx serve` registered in a host file mcpx
// reads (what `serve --print-config` writes), or the URL of the user's
// running `mcpx serve --http`, is listed as skipped and never started; ls,
// config and doctor say so, and the other servers work.
func TestMcpxNeverServesItself(t *testing.T) {
	e := NewEnv(t)
	// mcpx on PATH, as after an install: the entry would really run.
	e.Set("PATH", filepath.Dir(mcpxBin)+":"+os.Getenv("PATH"))
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, jsonString(fixtureBin)))
	var snippet []string
	for _, line := range strings.Split(e.MustOK("serve", "--print-config", "cursor").Stdout, "\n") {
		if !strings.HasPrefix(line, "#") {
			snippet = append(snippet, line)
		}
	}
	cursor := e.WriteUntrusted(filepath.Join(e.Home, ".cursor", "mcp.json"), strings.Join(snippet, "\n"))

	e.MustOK("refresh")
	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	got := map[string]api.Namespace{}
	for _, n := range ns.Namespaces {
		got[n.Name] = n
	}
	if n := got["mcpx"]; n.State != api.StateSkipped || !strings.Contains(n.Error, "mcpx never serves itself") || n.Source != cursor {
		t.Errorf("ls: the mcpx serve entry: %+v", n)
	}
	if n := got["fx"]; n.State != api.StateCached || n.Tools == 0 {
		t.Errorf("ls: fx beside it: %+v", n)
	}
	if len(got) != 2 {
		t.Errorf("ls: %v", names(ns))
	}
	if r := e.MustOK("ls"); !strings.Contains(r.Stdout, "skipped: runs `mcpx serve`, which is mcpx itself") {
		t.Errorf("ls text: %s", r)
	}
	for _, cmd := range e.MarkedCmdlines() {
		if strings.Contains(cmd, " serve") {
			t.Errorf("mcpx serve was started: %q", cmd)
		}
	}
	if r := e.Mcpx("call", "mcpx.search_tools", "query=x"); r.Code != 2 || !strings.Contains(r.Stderr, "mcpx never serves itself") {
		t.Errorf("call on the skipped entry: %s", r)
	}
	if r := e.MustOK("config"); !strings.Contains(r.Stdout, "// mcpx: skipped: ") || !strings.Contains(r.Stderr, `server "mcpx" runs`) {
		t.Errorf("config: %s", r)
	}
	if r := e.Mcpx("doctor"); !strings.Contains(r.Stdout, `server "mcpx" runs `+"`mcpx serve`") {
		t.Errorf("doctor: %s", r)
	}

	// An entry Load cannot see through (a shell running mcpx serve) is
	// started, and that serve refuses to run under the daemon: the entry
	// fails with serve's sentence, and no tool of mcpx's own is listed.
	e.WriteUntrusted(cursor, `{"mcpServers": {"shell": {"command": "sh", "args": ["-c", "exec mcpx serve"]}}}`)
	if r := e.Mcpx("refresh", "shell"); r.Code == 0 {
		t.Errorf("refresh of sh -c 'mcpx serve': %s", r)
	}
	e.JSON(&ns, "ls")
	for _, n := range ns.Namespaces {
		// serve's sentence is its stderr, kept beside the error.
		if n.Name == "shell" && (n.Tools != 0 || !strings.Contains(n.Error+n.Stderr, "serve is refused here")) {
			t.Errorf("ls: sh -c 'mcpx serve': %+v", n)
		}
	}

	// The URL of the user's own `mcpx serve --http`.
	addr := freeAddr(t)
	srv := startServe(t, e, "--http", addr)
	testkit.Eventually(t, 30*time.Second, "serve to record its address", func() bool {
		ents, _ := os.ReadDir(filepath.Join(e.Run, "mcpx", "serve"))
		return len(ents) > 0
	})
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s},
  "web": {"url": "http://localhost:%s/mcp"}}}`, jsonString(fixtureBin), addr[strings.LastIndex(addr, ":")+1:]))
	web := func() api.Namespace {
		var ns api.NamespacesResponse
		e.JSON(&ns, "ls")
		for _, n := range ns.Namespaces {
			if n.Name == "web" {
				return n
			}
		}
		t.Fatalf("no web in %v", names(ns))
		return api.Namespace{}
	}
	if n := web(); n.State != api.StateSkipped || !strings.Contains(n.Error, "mcpx serve --http "+addr) {
		t.Errorf("ls: the URL of mcpx serve --http: %+v", n)
	}
	if r := e.Mcpx("refresh", "web"); r.Code != 2 {
		t.Errorf("refresh of the skipped URL: %s", r)
	}
	// Once that serve has exited, the URL is an ordinary server again.
	srv.Process.Signal(os.Interrupt)
	srv.Wait()
	if n := web(); n.State == api.StateSkipped {
		t.Errorf("ls after serve exited: %+v", n)
	}
}
