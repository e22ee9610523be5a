package upstream

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	osproc "github.com/mcpx-dev/mcpx/internal/proc"
)

func TestReapOrphans(t *testing.T) {
	if osproc.StartTime(os.Getpid()) == 0 {
		t.Skip("no /proc here")
	}
	start := func() (*exec.Cmd, chan struct{}) {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		return cmd, done
	}
	ours, oursDone := start()
	other, otherDone := start()
	sid, _ := unix.Getsid(0)
	var recs []byte
	for _, c := range []childRecord{
		{Pgid: ours.Process.Pid, Start: osproc.StartTime(ours.Process.Pid), Sid: sid},
		// The same pgid in another session: a reused pgid of someone
		// else's looks like this, and is left alone.
		{Pgid: other.Process.Pid, Start: osproc.StartTime(other.Process.Pid), Sid: sid + 1},
	} {
		b, _ := json.Marshal(c)
		recs = append(append(recs, b...), '\n')
	}
	path := filepath.Join(t.TempDir(), "k.children")
	if err := os.WriteFile(path, recs, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := ReapOrphans(path)
	if err != nil || n != 1 {
		t.Fatalf("ReapOrphans = %d, %v; want 1", n, err)
	}
	select {
	case <-oursDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded group was not killed")
	}
	select {
	case <-otherDone:
		t.Fatal("a group of another session was killed")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the record was not removed: %v", err)
	}
}

// TestReapOrphansInPIDNamespace runs TestReapOrphans again inside a new PID
// namespace, where the session's leader is outside and getsid answers 0 (as
// in a container). Records there carry no session, only a start time.
func TestReapOrphansInPIDNamespace(t *testing.T) {
	if os.Getenv("MCPX_REAP_IN_NS") != "" {
		t.Skip("already inside the namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and unshare(1)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", self,
		"-test.run", "^TestReapOrphans$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "MCPX_REAP_IN_NS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a new PID namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestReapOrphans") {
		t.Fatalf("the test did not run inside the namespace:\n%s", out)
	}
}
