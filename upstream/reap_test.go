package upstream

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	if testing.Short() {
		t.Skip("runs a PID namespace of servers (-short)")
	}
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

func TestOrphansMatchesRecordedGroupsOnly(t *testing.T) {
	recs := []childRecord{{Pgid: 500, Start: 1000, Sid: 40}, {Pgid: 700, Start: 3000}}
	procs := []osproc.Entry{
		{PID: 500, Pgid: 500, Sid: 40, Start: 1000}, // the leader
		{PID: 501, Pgid: 500, Sid: 40, Start: 1200}, // a member it started
		{PID: 502, Pgid: 500, Sid: 41, Start: 1200}, // same group number, another session
		{PID: 503, Pgid: 500, Sid: 40, Start: 900},  // older than the group: a reused number
		{PID: 504, Pgid: 504, Sid: 40, Start: 1300}, // another group
		{PID: 700, Pgid: 700, Sid: 0, Start: 3000},  // no session (PID namespace), start fits
		{PID: 701, Pgid: 700, Sid: 0, Start: 2000},  // no session, too old
		{PID: 99, Pgid: 500, Sid: 40, Start: 1500},  // ourselves
		{PID: 1, Pgid: 500, Sid: 40, Start: 1500},   // init, never
	}
	got := orphans(recs, procs, 99)
	if want := []int{500, 501, 700}; !slices.Equal(got, want) {
		t.Fatalf("orphans = %v, want %v", got, want)
	}
}

// D6: where the process table cannot be read (macOS has no /proc), the
// record is kept for a daemon that can check, never dropped unchecked.
func TestReapOrphansKeepsTheRecordWhenItCannotCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.children")
	b, _ := json.Marshal(childRecord{Pgid: 12345, Start: 1, Sid: 12})
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(f func() ([]osproc.Entry, error)) { listProcs = f }(listProcs)
	listProcs = func() ([]osproc.Entry, error) { return nil, osproc.ErrNoTable }
	if n, err := ReapOrphans(path); n != 0 || !errors.Is(err, osproc.ErrNoTable) {
		t.Fatalf("ReapOrphans = %d, %v; want ErrNoTable", n, err)
	}
	// The daemon that could not check records its own children in path;
	// the old records wait beside it for the next one.
	b2, _ := json.Marshal(childRecord{Pgid: 23456, Start: 2, Sid: 12})
	if err := os.WriteFile(path, append(b2, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen [][]childRecord
	listProcs = func() ([]osproc.Entry, error) { return nil, osproc.ErrNoTable }
	if _, err := ReapOrphans(path); err == nil {
		t.Fatal("second ReapOrphans without a table succeeded")
	}
	// The next daemon can check: it sees both generations.
	listProcs = func() ([]osproc.Entry, error) {
		seen = append(seen, nil)
		return []osproc.Entry{{PID: 2, Pgid: 2, Sid: 2, Start: 1}}, nil
	}
	if _, err := ReapOrphans(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".unreaped"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after a checked reap: %v", p, err)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("process table read %d times", len(seen))
	}
}

// Records that could not be checked accumulate until a daemon can check.
func TestReapOrphansCarriesUncheckedRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.children")
	defer func(f func() ([]osproc.Entry, error)) { listProcs = f }(listProcs)
	listProcs = func() ([]osproc.Entry, error) { return nil, osproc.ErrNoTable }
	for _, pg := range []int{3001, 3002} {
		b, _ := json.Marshal(childRecord{Pgid: pg, Start: 5, Sid: 7})
		if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReapOrphans(path); !errors.Is(err, osproc.ErrNoTable) {
			t.Fatalf("ReapOrphans = %v", err)
		}
	}
	got, _ := os.ReadFile(path + ".unreaped")
	if !strings.Contains(string(got), `"pgid":3001`) || !strings.Contains(string(got), `"pgid":3002`) {
		t.Fatalf("unreaped records %q, want both groups", got)
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
