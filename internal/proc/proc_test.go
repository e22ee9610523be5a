package proc

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid 0 or -1 alive")
	}
	// A child that exited but is not yet reaped is a zombie: not alive.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the exited child never showed as a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) {
		t.Fatal("a zombie counts as alive")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if Alive(pid) {
		t.Fatal("a reaped child counts as alive")
	}
}

func TestIsProvesIdentity(t *testing.T) {
	self := os.Getpid()
	start := StartTime(self)
	if start == 0 {
		t.Skip("no /proc start times here")
	}
	if !Is(self, start) || !Is(self, 0) {
		t.Fatal("this process is not itself")
	}
	if Is(self, start+1) {
		t.Fatal("another start time matched")
	}
	if Is(self, 0, "--key", "no-such-key-anywhere") {
		t.Fatal("a command line without the arguments matched")
	}
	for _, c := range []struct {
		argv, args []string
		want       bool
	}{
		{[]string{"mcpx", "daemon", "--key", "abc"}, []string{"--key", "abc"}, true},
		{[]string{"mcpxd", "--key=abc"}, []string{"--key", "abc"}, true},
		{[]string{"mcpx", "daemon", "--key", "abcd"}, []string{"--key", "abc"}, false},
		{[]string{"sleep", "60"}, []string{"--key", "abc"}, false},
		{[]string{"x", "abc", "--key"}, []string{"--key", "abc"}, false},
	} {
		if got := containsRun(c.argv, c.args); got != c.want {
			t.Errorf("containsRun(%q, %q) = %v", c.argv, c.args, got)
		}
	}
	if err := Signal(self, start+1, 0); err == nil {
		t.Fatal("Signal reached a process with another start time")
	}
	if err := Signal(self, start, 0); err != nil {
		t.Fatalf("Signal to self: %v", err)
	}
}

// A process stopped by SIGSTOP is Stopped until SIGCONT (Linux, where
// /proc says).
func TestStopped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux's")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	waitFor := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for Stopped(pid) != want {
			if time.Now().After(deadline) {
				t.Fatalf("Stopped(%d) stayed %v", pid, !want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(false)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(true)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(false)
	if Stopped(os.Getpid()) {
		t.Error("this process counts as stopped")
	}
}

// CPUTime agrees with what getrusage says this process used, within the
// 10 ms ticks /proc counts in (and what the process spends between the two
// reads).
func TestCPUTimeAgreesWithGetrusage(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	for x, deadline := 0, time.Now().Add(100*time.Millisecond); time.Now().Before(deadline); x++ {
		_ = x * x // some CPU for both counters to see
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	got, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if d := got - want; d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("CPUTime = %v, getrusage = %v", got, want)
	}
}
