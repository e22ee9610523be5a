package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// Ctrl-C on `mcpx call` closes its connection, and the daemon cancels the
// call upstream: the server's handler sees its context end.
func TestInterruptCancelsTheCallInTheServer(t *testing.T) {
	e := NewEnv(t)
	started := filepath.Join(e.Root, "started.log")
	cancelled := filepath.Join(e.Root, "cancelled.log")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s,
  "env": {"FIXTURE_STARTED_LOG": %s, "FIXTURE_CANCEL_LOG": %s}}}}`, jsonString(fixtureBin), jsonString(started), jsonString(cancelled)))
	e.MustOK("refresh")
	cmd := exec.Command(mcpxBin, "call", "fx.slow", "seconds=600")
	cmd.Dir = e.Work
	cmd.Env = e.Environ()
	var errb testkit.SyncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "the slow call to start in the server", func() bool {
		b, _ := os.ReadFile(started)
		return strings.Contains(string(b), "started 600")
	})
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Fatalf("interrupted call: %v, stderr %q; want mcpx ended by SIGINT", err, errb.String())
	}
	testkit.Eventually(t, 60*time.Second, "the server to see the call cancelled", func() bool {
		b, _ := os.ReadFile(cancelled)
		return strings.Contains(string(b), "cancelled 600")
	})
}

// Under the direct manager a stopped daemon leaves no socket file behind,
// although the socket it served was handed to it as a descriptor.
func TestDirectStopRemovesTheHandedSocket(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("call", "demo.echo", "text=x")
	sock := socketOf(t, e)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %s while running: %v", sock, err)
	}
	e.MustOK("stop")
	testkit.Eventually(t, 30*time.Second, "the socket file to go", func() bool {
		_, err := os.Stat(sock)
		return os.IsNotExist(err)
	})
	var st statusDoc
	e.JSON(&st, "status")
	if st.Socket.State == "listening" {
		t.Fatalf("status after stop: socket %+v", st.Socket)
	}
}
