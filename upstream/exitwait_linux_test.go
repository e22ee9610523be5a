package upstream

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// awaitExit returns once the child has exited, and not before: the child
// waits for a line on stdin, so it is alive until the test writes one.
func TestAwaitExitReturnsWhenTheChildExits(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read line")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := awaitExitAsync(cmd.Process.Pid)
	select {
	case <-done:
		t.Fatal("awaitExit returned while the child was alive")
	case <-time.After(200 * time.Millisecond):
	}
	fmt.Fprintln(in)
	<-done
	// Exited, not reaped: the pid is still ours, and Wait reaps it.
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Wait after awaitExit: %v", err)
	}
}

// awaitExit returns for a child that exited before it began, however the
// exit and the poller's registration fall: a wait that trusted the
// poller's one report missed 11 of 2,000 such children (found by review).
func TestAwaitExitReturnsForAChildAlreadyGone(t *testing.T) {
	for i := range 300 {
		cmd := exec.Command("true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			time.Sleep(time.Millisecond) // exited before the wait, mostly
		}
		select {
		case <-awaitExitAsync(cmd.Process.Pid):
		case <-time.After(10 * time.Second):
			t.Fatalf("child %d: awaitExit did not return after the child exited", i)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitExitAsync runs awaitExit(pid) and closes the channel it returns
// when that returns.
func awaitExitAsync(pid int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		awaitExit(pid)
		close(done)
	}()
	return done
}

// A live stdio server costs the daemon no OS thread of its own: each used
// to keep one blocked in waitid.
func TestLiveServersHoldNoThreadEach(t *testing.T) {
	p := newPools(t, Options{})
	before := osThreads(t)
	const n = 30
	for i := range n {
		spec := fixtureSpec(t, config.Options{}, nil)
		spec.Server.Name += strconv.Itoa(i)
		spec.Hash = config.ServerHash(spec.Server.Name)
		if got := call(t, p, spec, Caller{}, "echo", `{"text":"hi"}`); got != "hi" {
			t.Fatalf("echo: %q", got)
		}
	}
	if live := p.Live(fixtureSpec(t, config.Options{}, nil).Hash + "0"); live != 1 {
		t.Fatalf("server 0 has %d live instances, want 1", live)
	}
	if after := osThreads(t); after-before >= n/2 {
		t.Errorf("threads grew from %d to %d with %d live servers", before, after, n)
	}
}

// osThreads is this process's number of OS threads.
func osThreads(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := bytes.Cut(status, []byte("\nThreads:"))
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		t.Fatalf("Threads: in /proc/self/status: %v", err)
	}
	return n
}
