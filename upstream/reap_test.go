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

// The servers recorded by a daemon that handed its socket over are reaped
// once that daemon is gone, never while it runs.
func TestReapRetired(t *testing.T) {
	if osproc.StartTime(os.Getpid()) == 0 {
		t.Skip("no /proc here")
	}
	server := func() (*exec.Cmd, chan struct{}) {
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
	sid, _ := unix.Getsid(0)
	record := func(path string, cmd *exec.Cmd) {
		b, _ := json.Marshal(childRecord{Pgid: cmd.Process.Pid, Start: osproc.StartTime(cmd.Process.Pid), Sid: sid})
		if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A daemon that is gone: a process that ran and was reaped.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	children := filepath.Join(t.TempDir(), "k.children")
	orphan, orphanDone := server()
	kept, keptDone := server()
	deadFile := RetiredChildren(children, gone.Process.Pid, 1)
	liveFile := RetiredChildren(children, os.Getpid(), osproc.StartTime(os.Getpid()))
	record(deadFile, orphan)
	record(liveFile, kept)

	if n, err := ReapRetired(children); err != nil || n != 1 {
		t.Fatalf("ReapRetired = %d, %v; want 1", n, err)
	}
	select {
	case <-orphanDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server of the dead daemon was not killed")
	}
	select {
	case <-keptDone:
		t.Fatal("a server of a daemon still running was killed")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := os.Stat(deadFile); !os.IsNotExist(err) {
		t.Errorf("the dead daemon's record was not removed: %v", err)
	}
	if _, err := os.Stat(liveFile); err != nil {
		t.Errorf("the running daemon's record: %v", err)
	}
}

// Moving the record of running servers renames the file and records there
// from then on; moving it back restores the first path.
func TestMoveChildren(t *testing.T) {
	dir := t.TempDir()
	p := New(Options{ChildrenFile: filepath.Join(dir, "k.children")})
	p.noteChild(os.Getpid(), true)
	moved := filepath.Join(dir, "moved")
	if err := p.MoveChildren(moved); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.opts.ChildrenFile); !os.IsNotExist(err) || p.ChildrenFile() != moved {
		t.Fatalf("after the move: %v, now %s", err, p.ChildrenFile())
	}
	p.noteChild(os.Getpid(), false)
	if b, err := os.ReadFile(moved); err != nil || len(b) != 0 {
		t.Fatalf("the moved record: %q, %v", b, err)
	}
	if err := p.MoveChildren(""); err != nil || p.ChildrenFile() != p.opts.ChildrenFile {
		t.Fatalf("moving back: %v, now %s", err, p.ChildrenFile())
	}
	if _, err := os.Stat(p.opts.ChildrenFile); err != nil {
		t.Fatal(err)
	}
}
