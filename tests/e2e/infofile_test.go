package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// Row 11: a daemon whose info file was removed (with its socket, or alone)
// or replaced by another daemon's writes it again when it serves a request,
// so status and stop find it.
func TestInfoFileKeptTrue(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("call", "demo.echo", "text=warm")
	var st statusDoc
	e.JSON(&st, "status")
	pid := st.Service.PID
	if st.Service.State != "running" || pid == 0 {
		t.Fatalf("status before: %+v", st)
	}
	info := filepath.Join(e.Run, "mcpx", st.DaemonKey+".json")
	seesDaemon := func(when string) {
		t.Helper()
		var st statusDoc
		e.JSON(&st, "status")
		if st.Service.State != "running" || st.Service.PID != pid {
			t.Fatalf("%s: status says %+v, want daemon %d running", when, st.Service, pid)
		}
	}

	// The socket and the info file removed: the call waits for the daemon
	// to bind its socket again, and finds the file written again.
	for _, f := range []string{info, st.Socket.Path} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.MustOK("call", "demo.echo", "text=after"); r.Stdout != "after" {
		t.Fatalf("call after the removal:\n%s", r)
	}
	seesDaemon("after removing the socket and the info file")

	// The info file alone removed, then replaced by another daemon's. The
	// daemon looks at most once a second: let a second pass each time.
	b, err := os.ReadFile(info)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["pid"], doc["pidStart"] = 1, 1
	foreign, _ := json.Marshal(doc)
	for what, change := range map[string]func() error{
		"removed":  func() error { return os.Remove(info) },
		"replaced": func() error { return os.WriteFile(info, foreign, 0o600) },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
		e.MustOK("call", "demo.echo", "text=x")
		seesDaemon("after the info file was " + what)
	}

	// Removed right after a request, and no request after it: status and
	// stop send none, so the daemon restores the file on its own.
	e.MustOK("call", "demo.echo", "text=last")
	if err := os.Remove(info); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "status to find the daemon with no request after the removal", func() bool {
		var st statusDoc
		e.JSON(&st, "status")
		return st.Service.State == "running" && st.Service.PID == pid
	})

	if r := e.MustOK("stop"); !strings.Contains(r.Stdout+r.Stderr, "stopped daemon") {
		t.Fatalf("stop did not find the daemon:\n%s", r)
	}
	testkit.Eventually(t, 30*time.Second, "the daemon to exit", func() bool { return !proc.Alive(pid) })
}
