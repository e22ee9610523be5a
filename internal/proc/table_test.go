package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	// comm with spaces and parentheses, as a process may name itself.
	b := []byte("4242 (my (odd) name) S 1 4240 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0\n")
	pgrp, sid, start, ok := parseStat(b)
	if !ok || pgrp != 4240 || sid != 4200 || start != 987654 {
		t.Fatalf("parseStat = %d %d %d %v", pgrp, sid, start, ok)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "4242 (x) S 1 a b 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 x 0"} {
		if _, _, _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) ok", bad)
		}
	}
}

// List shows a child in its own process group with the group, session and
// start time the rest of this package reports.
func TestListShowsAChild(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	procs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	sid, _ := unix.Getsid(0)
	for _, p := range procs {
		if p.PID == pid {
			if p.Pgid != pid || p.Sid != sid || p.Start == 0 || p.Start != StartTime(pid) {
				t.Fatalf("child %+v; want group %d, session %d, start %d", p, pid, sid, StartTime(pid))
			}
			return
		}
	}
	t.Fatalf("child %d not among %d processes (we are %d)", pid, len(procs), os.Getpid())
}
