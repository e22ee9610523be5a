package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// The test binary doubles as the "daemon" the direct manager spawns: with
// fakeDaemonEnv set, `<test binary> daemon --key K` listens on the socket,
// writes an info file and appends one line to a count file per start.
const (
	fakeDaemonEnv = "MCPX_TEST_FAKE_DAEMON" // "ok" | "slow" | "fail" | "hang"
	fakeCountEnv  = "MCPX_TEST_FAKE_COUNT"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeDaemonEnv); mode != "" {
		os.Exit(fakeDaemon(mode))
	}
	os.Exit(m.Run())
}

func fakeDaemon(mode string) int {
	if len(os.Args) != 4 || os.Args[1] != "daemon" || os.Args[2] != "--key" {
		fmt.Fprintf(os.Stderr, "fake daemon: bad arguments %q\n", os.Args)
		return 2
	}
	key := config.DaemonKey(os.Args[3])
	paths, err := config.DefaultPaths(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f, err := os.OpenFile(os.Getenv(fakeCountEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
		f.Close()
	}
	switch mode {
	case "fail":
		fmt.Println("loading config")
		fmt.Fprintln(os.Stderr, "boom: /x/.mcp.json:3:7: unexpected token")
		return 2
	case "hang":
		select {}
	}
	// The direct manager hands over the socket it bound, as systemd
	// would, marked as ours instead of by LISTEN_PID; nothing else of a
	// service manager reaches us.
	if os.Getenv("LISTEN_FDS") != "1" || os.Getenv("LISTEN_FDNAMES") != "mcpx" || os.Getenv("LISTEN_PID") != "" ||
		os.Getenv(api.EnvListenInherited) != "1" || os.Getenv(api.EnvReadyFD) != "4" || os.Getenv("NOTIFY_SOCKET") != "" {
		fmt.Fprintln(os.Stderr, "fake daemon: not handed a socket as the direct manager does, or inherited service manager variables")
		return 3
	}
	sock := paths.Socket(key)
	if s := os.Getenv("MCPX_SOCKET"); s != "" {
		sock = s
	}
	// The socket file exists before this process does anything.
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		fmt.Fprintf(os.Stderr, "fake daemon: socket %s not bound before the start: %v\n", sock, err)
		return 4
	}
	if mode == "slow" {
		time.Sleep(300 * time.Millisecond) // connections queue meanwhile
	}
	// SIGTERM is ours before anyone can learn our pid (the info file) or
	// that we are ready: a Stop right after the start must find us able
	// to clean up.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	// The info file goes first (atomically) so a test that sees the socket
	// answer also sees it.
	// With its start time, as the real daemon writes it: the command line
	// alone cannot prove the pid while the process exits (/proc empties it).
	info := config.InfoFile{DaemonKey: string(key), Socket: sock, Pid: os.Getpid(), PidStart: proc.StartTime(os.Getpid()), Manager: NameDirect, StartedAt: time.Now()}
	if err := config.WriteJSONAtomic(paths.Info(key), info, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.FileListener(os.NewFile(3, "mcpx"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ready := os.NewFile(4, "ready")
	ready.Write([]byte("READY=1\n"))
	ready.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "ok %d\n", os.Getpid())
			c.Close()
		}
	}()
	<-sig
	ln.Close()
	os.Remove(sock)
	os.Remove(paths.Info(key))
	return 0
}

// setup gives the test its own runtime and state directories and returns a
// direct manager whose "binary" is this test binary.
func setup(t *testing.T, mode string) (*Direct, string) {
	t.Helper()
	// Short base: socket paths must stay under 100 bytes.
	base, err := os.MkdirTemp("", "mcpxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(base, "run"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	t.Setenv("MCPX_SOCKET", "")
	t.Setenv("NOTIFY_SOCKET", "/nonexistent/notify")
	t.Setenv("LISTEN_FDS", "3")
	t.Setenv(fakeDaemonEnv, mode)
	count := filepath.Join(base, "count")
	t.Setenv(fakeCountEnv, count)
	paths, err := config.DefaultPaths(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := NewDirect(paths, self).(*Direct)
	d.StartTimeout = 5 * time.Second
	return d, count
}

func starts(t *testing.T, count string) []string {
	t.Helper()
	b, err := os.ReadFile(count)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func TestDirectConcurrentEnsureStartsOneDaemon(t *testing.T) {
	d, count := setup(t, "ok")
	key := config.DaemonKey("abcdef012345")
	ctx := context.Background()
	t.Cleanup(func() { d.Stop(ctx, key, true) })

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() { errs <- d.Ensure(ctx, key) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Ensure: %v", err)
		}
	}
	// Ensure does not wait for the daemon; its readiness does.
	if err := d.StartFailure(ctx, key); err != nil {
		t.Fatalf("start: %v", err)
	}
	if got := starts(t, count); len(got) != 1 {
		t.Fatalf("daemon started %d times, want 1 (pids %v)", len(got), got)
	}
	if err := probe(d.Paths.Socket(key)); err != nil {
		t.Fatalf("socket does not answer after Ensure: %v", err)
	}
	// Ensure on a live daemon starts nothing.
	if err := d.Ensure(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := starts(t, count); len(got) != 1 {
		t.Fatalf("second Ensure started another daemon: %v", got)
	}

	st, err := d.State(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if st.Service != ServiceRunning || st.Socket != SocketListening || st.PID == 0 {
		t.Fatalf("State = %+v, want running/listening with a pid", st)
	}
	list, err := d.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != key {
		t.Fatalf("List = %+v, want one entry for %s", list, key)
	}

	if err := d.Stop(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(st.PID) {
		t.Fatalf("pid %d still alive after Stop", st.PID)
	}
	st, err = d.State(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if st.Service != ServiceIdle {
		t.Fatalf("State after Stop = %+v, want idle", st)
	}
}

func TestDirectStartFailureCarriesLogTail(t *testing.T) {
	d, _ := setup(t, "fail")
	key := config.DaemonKey("0badc0ffee00")
	// An earlier run's output must not be mistaken for this start's.
	if err := os.MkdirAll(filepath.Dir(d.Paths.Log(key)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.Paths.Log(key), []byte("old run output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Ensure(context.Background(), key); err != nil {
		t.Fatalf("Ensure: %v (it returns once the daemon is spawned)", err)
	}
	err := d.StartFailure(context.Background(), key)
	var se *StartError
	if !errors.As(err, &se) || !errors.Is(err, ErrStartFailed) {
		t.Fatalf("StartFailure = %v, want a *StartError", err)
	}
	if !strings.Contains(se.Tail, "boom: /x/.mcp.json:3:7") || !strings.Contains(se.Tail, "loading config") {
		t.Fatalf("tail = %q, want the daemon's output", se.Tail)
	}
	if strings.Contains(se.Tail, "old run") {
		t.Fatalf("tail = %q includes an earlier run's output", se.Tail)
	}
	if !strings.Contains(se.Reason, "exit") {
		t.Fatalf("reason = %q, want the exit status", se.Reason)
	}
}

func TestDirectStartTimeoutKillsTheChild(t *testing.T) {
	d, count := setup(t, "hang")
	d.StartTimeout = 300 * time.Millisecond
	key := config.DaemonKey("123412341234")
	if err := d.Ensure(context.Background(), key); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	err := d.StartFailure(context.Background(), key)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "did not answer") {
		t.Fatalf("StartFailure = %v, want a start timeout", err)
	}
	pids := starts(t, count)
	if len(pids) != 1 {
		t.Fatalf("starts = %v", pids)
	}
	var pid int
	fmt.Sscan(pids[0], &pid)
	if !waitGone(context.Background(), &config.InfoFile{Pid: pid}, 5*time.Second) {
		t.Fatalf("hung daemon %d still running after the failed start", pid)
	}
}

// Ensure binds the socket before the daemon starts and returns without
// waiting for it: a connection made at once is queued by the kernel and
// answered when the (slow) daemon accepts.
func TestDirectHandsOverTheSocketAndNobodyWaits(t *testing.T) {
	d, count := setup(t, "slow")
	key := config.DaemonKey("feedfeedfeed")
	ctx := context.Background()
	t.Cleanup(func() { d.Stop(ctx, key, true) })
	if err := d.Ensure(ctx, key); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", d.Paths.Socket(key))
	if err != nil {
		t.Fatalf("dial right after Ensure: %v", err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(b, "ok ") {
		t.Fatalf("queued connection: %q, %v", b, err)
	}
	if err := d.StartFailure(ctx, key); err != nil {
		t.Fatalf("StartFailure after a good start: %v", err)
	}
	if got := starts(t, count); len(got) != 1 {
		t.Fatalf("starts = %v", got)
	}
}

func TestDirectStateStaleInfoFile(t *testing.T) {
	d, _ := setup(t, "ok")
	key := config.DaemonKey("aaaaaaaaaaaa")
	if err := d.Paths.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	// A pid that cannot exist (above pid_max).
	b, _ := json.Marshal(config.InfoFile{DaemonKey: string(key), Pid: 1 << 30})
	if err := os.WriteFile(d.Paths.Info(key), b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := d.State(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if st.Service != ServiceStale {
		t.Fatalf("State = %+v, want stale", st)
	}
	if err := d.Stop(context.Background(), key, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Paths.Info(key)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stop left the stale info file: %v", err)
	}
}

func TestDaemonEnvDropsServiceManagerVariables(t *testing.T) {
	got := daemonEnv([]string{"PATH=/bin", "LISTEN_FDS=3", "LISTEN_PID=9", "LISTEN_FDNAMES=mcpx", "NOTIFY_SOCKET=/x", "HOME=/h"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/h" {
		t.Fatalf("daemonEnv = %q", got)
	}
}

// A pid read from an info file may belong to another process by now: Stop
// must not signal it and State must not call it running.
func TestDirectLeavesAReusedPidAlone(t *testing.T) {
	d, _ := setup(t, "ok")
	key := config.DaemonKey("bbbbbbbbbbbb")
	if err := d.Paths.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	exited := make(chan struct{})
	go func() { sleep.Wait(); close(exited) }()
	pid := sleep.Process.Pid
	for _, info := range []config.InfoFile{
		{DaemonKey: string(key), Pid: pid},                                    // no start time: command line decides
		{DaemonKey: string(key), Pid: pid, PidStart: proc.StartTime(pid) + 1}, // another start time
	} {
		b, _ := json.Marshal(info)
		if err := os.WriteFile(d.Paths.Info(key), b, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := d.State(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if st.Service == ServiceRunning {
			t.Fatalf("State = %+v: an unrelated process counts as the daemon", st)
		}
		if err := d.Stop(context.Background(), key, false); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
			t.Fatalf("Stop killed the unrelated process %d (info %+v)", pid, info)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// While a daemon for the key holds its alive lock, a missing socket does
// not start a second daemon: Ensure waits for the live one, and starts a
// daemon only once the lock is let go.
func TestDirectDoesNotStartASecondDaemonWhileOneIsAlive(t *testing.T) {
	d, count := setup(t, "ok")
	d.StartTimeout, d.DrainTimeout = 200*time.Millisecond, 200*time.Millisecond
	key := config.DaemonKey("cccccccccccc")
	if err := d.Paths.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	alive := flock.New(d.Paths.Alive(key))
	if ok, err := alive.TryLock(); !ok || err != nil {
		t.Fatalf("take the alive lock: %v", err)
	}
	err := d.Ensure(context.Background(), key)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "running but does not answer") {
		t.Fatalf("Ensure with a live daemon and no socket: %v", err)
	}
	if got := starts(t, count); len(got) != 0 {
		t.Fatalf("a second daemon was started: %v", got)
	}
	alive.Unlock()
	if err := d.Ensure(context.Background(), key); err != nil {
		t.Fatalf("Ensure after the live daemon went: %v", err)
	}
	// Ensure returns at the spawn; the daemon's readiness says it started.
	if err := d.StartFailure(context.Background(), key); err != nil {
		t.Fatalf("start after the live daemon went: %v", err)
	}
	if got := starts(t, count); len(got) != 1 {
		t.Fatalf("starts = %v, want 1", got)
	}
	d.Stop(context.Background(), key, false)
}
