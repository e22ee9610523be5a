package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
	osproc "github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// fixtureBin is the mcpx-fixture command, built once for the test binary.
var fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "upstream-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fixtureBin, err = testkit.Build(dir, testkit.Fixture); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newPools returns a pool set that stops servers quickly and is closed
// (with every process checked gone) when the test ends.
func newPools(t *testing.T, opts Options) *Pools {
	t.Helper()
	p := New(opts)
	p.stopGrace = 200 * time.Millisecond
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// fixtureSpec is a stdio spec running the fixture with env on top.
func fixtureSpec(t *testing.T, o config.Options, env map[string]string) Spec {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
	return Spec{
		Server: &config.Server{
			Name:      name,
			Command:   fixtureBin,
			Env:       env,
			Transport: config.TransportStdio,
			Options:   o,
		},
		Hash: config.ServerHash(name),
		Env:  os.Environ(),
	}
}

// text returns the text content of a raw CallToolResult.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode result %s: %v", raw, err)
	}
	if r.IsError || len(r.Content) == 0 {
		t.Fatalf("result is an error or empty: %s", raw)
	}
	return r.Content[0].Text
}

func call(t *testing.T, p *Pools, spec Spec, c Caller, tool, args string) string {
	t.Helper()
	raw, err := p.Call(context.Background(), spec, c, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return text(t, raw)
}

// eventually polls cond until it holds (bounded generously: the machine
// may be loaded).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, what, cond)
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

func TestCallEcho(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	if got := call(t, p, spec, Caller{}, "echo", `{"text":"hello"}`); got != "hello" {
		t.Errorf("echo = %q", got)
	}
	if n := p.Live(spec.Hash); n != 1 {
		t.Errorf("Live = %d, want 1", n)
	}
}

func TestCallRPCError(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	_, err := p.Call(context.Background(), spec, Caller{}, "no_such_tool", nil)
	var re *RPCError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v (%T), want *RPCError", err, err)
	}
	if p.Live(spec.Hash) != 1 {
		t.Errorf("an RPC error must not drop the instance")
	}
}

func TestEnv(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, map[string]string{"FROM_SERVER": "server-value"})
	spec.Env = append(os.Environ(), "FROM_CALLER=caller-value", "FROM_SERVER=overridden")
	if got := call(t, p, spec, Caller{}, "env", `{"name":"FROM_SERVER"}`); got != "server-value" {
		t.Errorf("server env = %q", got)
	}
	if got := call(t, p, spec, Caller{}, "env", `{"name":"FROM_CALLER"}`); got != "caller-value" {
		t.Errorf("caller env = %q", got)
	}
}

// canonical decodes JSON into any so that key order and spacing do not
// matter in comparisons.
func canonical(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestListLossless(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	var anyof json.RawMessage
	for _, tool := range l.Tools {
		var head struct{ Name string }
		if err := json.Unmarshal(tool, &head); err != nil {
			t.Fatal(err)
		}
		if head.Name == "anyof" {
			anyof = tool
		}
	}
	if anyof == nil {
		t.Fatalf("anyof missing from %d tools", len(l.Tools))
	}
	want := canonical(t, []byte(`{
		"name": "anyof",
		"description": "Accept either argument a or argument b, described by a raw JSON schema with anyOf.",
		"inputSchema": `+fixture.AnyOfSchema+`,
		"annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
	}`))
	if got := canonical(t, anyof); !reflect.DeepEqual(got, want) {
		t.Errorf("anyof tool changed on the way:\n got %s\nwant %v", anyof, want)
	}
	var info struct{ Name string }
	if err := json.Unmarshal(l.ServerInfo, &info); err != nil || info.Name != fixture.FullName {
		t.Errorf("serverInfo = %s (%v)", l.ServerInfo, err)
	}
	if l.ProtocolVersion == "" {
		t.Errorf("no protocol version")
	}
}

func toolNames(t *testing.T, tools []json.RawMessage) []string {
	t.Helper()
	var names []string
	for _, tool := range tools {
		var head struct{ Name string }
		if err := json.Unmarshal(tool, &head); err != nil {
			t.Fatal(err)
		}
		names = append(names, head.Name)
	}
	return names
}

func TestListPagination(t *testing.T) {
	p := newPools(t, Options{})
	plain := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_EXTRA_TOOLS": "5"})
	paged := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_EXTRA_TOOLS": "5", "FIXTURE_TOOLS_PAGE": "2"})
	paged.Hash += "-paged"
	all, err := p.List(context.Background(), plain, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := p.List(context.Background(), paged, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	want, got := toolNames(t, all.Tools), toolNames(t, pages.Tools)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged listing:\n got %v\nwant %v", got, want)
	}
	for _, n := range []string{"echo", "anyof", "tool_000", "tool_004"} {
		if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+n+" ") {
			t.Errorf("%s missing from %v", n, got)
		}
	}
}

func TestProtocolVersionRemembered(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	spec.ProtocolVersion = "2025-06-18"
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if l.ProtocolVersion != "2025-06-18" {
		t.Errorf("started with %q, want the remembered 2025-06-18", l.ProtocolVersion)
	}
}

func TestStartFailureCooldown(t *testing.T) {
	p := newPools(t, Options{})
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.cooldownBase, p.cooldownMax = time.Second, 4*time.Second
	spec := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_FAIL_START": "no database at db.invalid"})

	_, err := p.Call(context.Background(), spec, Caller{}, "echo", json.RawMessage(`{"text":"x"}`))
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *StartError", err, err)
	}
	if !strings.Contains(se.Stderr, "no database at db.invalid") {
		t.Errorf("stderr tail %q lacks the server's message", se.Stderr)
	}

	_, err = p.List(context.Background(), spec, Caller{})
	var ce *CooldownError
	if !errors.As(err, &ce) {
		t.Fatalf("second err = %v (%T), want *CooldownError", err, err)
	}
	if ce.Last == nil || !strings.Contains(ce.Last.Stderr, "no database") {
		t.Errorf("cooldown does not carry the failed start: %+v", ce.Last)
	}
	if d := ce.Until.Sub(now); d != time.Second {
		t.Errorf("first cooldown %s, want 1s", d)
	}

	// Each further failure doubles the cooldown, up to the cap.
	for _, want := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		now = ce.Until
		if _, err := p.Call(context.Background(), spec, Caller{}, "echo", nil); !errors.As(err, &se) {
			t.Fatalf("after cooldown: %v, want a new *StartError", err)
		}
		_, err = p.Call(context.Background(), spec, Caller{}, "echo", nil)
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want *CooldownError", err)
		}
		if d := ce.Until.Sub(now); d != want {
			t.Errorf("cooldown %s, want %s", d, want)
		}
	}

	// A successful start resets the count.
	now = ce.Until
	spec.Server.Env = nil
	call(t, p, spec, Caller{}, "echo", `{"text":"up"}`)
	spec.Server.Env = map[string]string{"FIXTURE_FAIL_START": "down again"}
	p.Call(context.Background(), spec, Caller{}, "echo", nil)
	if _, err := p.Call(context.Background(), spec, Caller{}, "echo", nil); !errors.As(err, &ce) || ce.Until.Sub(now) != time.Second {
		t.Errorf("after a good start the cooldown should restart at 1s: %v", err)
	}
}

func TestStartTimeout(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{StartTimeout: config.Duration(300 * time.Millisecond)},
		map[string]string{"FIXTURE_HANG_START": "1"})
	_, err := p.Call(context.Background(), spec, Caller{}, "echo", nil)
	var se *StartError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a *StartError from the start timeout", err)
	}
}

// TestStopSignalsGroup starts something that is no MCP server and ignores
// SIGTERM: the failed start must still leave no process of its group.
func TestStopSignalsGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a stubborn process group (-short)")
	}
	pid := failedStartPID(t, "stubborn", `echo $$ > "$0"; trap "" TERM; sleep 30 & wait`)
	// The sleep is not our child: init reaps it, in its own time.
	eventually(t, fmt.Sprintf("process group %d to be gone", pid), func() bool { return processGone(pid) })
}

// A member of the group that ignores SIGTERM and outlives the leader (which
// ends when its stdin closes) is killed once the grace has passed.
func TestStopKillsStubbornMembers(t *testing.T) {
	pid := failedStartPID(t, "stubborn-member", `(trap "" TERM; exec sleep 300) & echo $! > "$0"; exec cat > /dev/null`)
	eventually(t, fmt.Sprintf("the member %d that ignores SIGTERM to be gone", pid), func() bool { return !osproc.Alive(pid) })
}

// failedStartPID runs script (sh -c, $0 naming a file) as a server that
// never answers initialize, so its start fails and it is stopped, and
// returns the pid the script wrote into that file.
func failedStartPID(t *testing.T, name, script string) int {
	t.Helper()
	p := newPools(t, Options{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	spec := Spec{
		Server: &config.Server{
			Name:      name,
			Command:   "sh",
			Args:      []string{"-c", script, pidFile},
			Transport: config.TransportStdio,
			Options:   config.Options{StartTimeout: config.Duration(300 * time.Millisecond)},
		},
		Hash: config.ServerHash(name),
		Env:  os.Environ(),
	}
	_, err := p.Call(context.Background(), spec, Caller{}, "echo", nil)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StartError", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestCallTimeoutCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a call timeout (-short)")
	}
	p := newPools(t, Options{})
	log := filepath.Join(t.TempDir(), "cancel.log")
	// mcp-go's stdio server hands a tools/call to a worker goroutine but
	// handles notifications/cancelled on its read loop: a cancel that
	// overtakes the worker is lost. The timeout leaves the worker ample
	// time to take the call even on a loaded machine.
	spec := fixtureSpec(t, config.Options{CallTimeout: config.Duration(2 * time.Second)},
		map[string]string{fixture.CancelLogEnv: log})
	_, err := p.Call(context.Background(), spec, Caller{}, "slow", json.RawMessage(`{"seconds":30}`))
	var te *TimeoutError
	if !errors.As(err, &te) || te.Tool != "slow" {
		t.Fatalf("err = %v, want *TimeoutError for slow", err)
	}
	eventually(t, "the server to log the cancellation", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "cancelled 30")
	})
	if got := call(t, p, spec, Caller{}, "echo", `{"text":"still up"}`); got != "still up" {
		t.Errorf("after timeout echo = %q", got)
	}
}

func TestContextCancelReachesServer(t *testing.T) {
	p := newPools(t, Options{})
	log := filepath.Join(t.TempDir(), "cancel.log")
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{}, map[string]string{fixture.CancelLogEnv: log, fixture.StartedLogEnv: started})
	call(t, p, spec, Caller{}, "echo", `{"text":"warm"}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, spec, Caller{}, "slow", json.RawMessage(`{"seconds":31}`))
		done <- err
	}()
	// Cancel a call known to be running in the server (a cancel before
	// the request was written has nothing to tell the server).
	eventually(t, "slow to start", func() bool {
		b, _ := os.ReadFile(started)
		return strings.Contains(string(b), "started 31")
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	eventually(t, "the server to log the cancellation", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "cancelled 31")
	})
}

func pidOf(t *testing.T, p *Pools, spec Spec, c Caller) int {
	t.Helper()
	pid, err := strconv.Atoi(call(t, p, spec, c, "pid", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestScopes(t *testing.T) {
	p := newPools(t, Options{})

	t.Run("global", func(t *testing.T) {
		spec := fixtureSpec(t, config.Options{Scope: config.ScopeGlobal}, nil)
		a := pidOf(t, p, spec, Caller{Session: "a", Cwd: "/"})
		b := pidOf(t, p, spec, Caller{Session: "b", Cwd: "/tmp"})
		if a != b {
			t.Errorf("global scope used two instances: %d, %d", a, b)
		}
	})
	t.Run("session", func(t *testing.T) {
		spec := fixtureSpec(t, config.Options{Scope: config.ScopeSession}, nil)
		a1 := pidOf(t, p, spec, Caller{Session: "a"})
		b := pidOf(t, p, spec, Caller{Session: "b"})
		a2 := pidOf(t, p, spec, Caller{Session: "a"})
		if a1 != a2 || a1 == b {
			t.Errorf("session pids a=%d,%d b=%d", a1, a2, b)
		}
		if n := p.Live(spec.Hash); n != 2 {
			t.Errorf("Live = %d, want 2", n)
		}
	})
	t.Run("cwd", func(t *testing.T) {
		spec := fixtureSpec(t, config.Options{Scope: config.ScopeCwd}, nil)
		d1, _ := filepath.EvalSymlinks(t.TempDir())
		d2, _ := filepath.EvalSymlinks(t.TempDir())
		a1 := pidOf(t, p, spec, Caller{Cwd: d1})
		b := pidOf(t, p, spec, Caller{Cwd: d2})
		a2 := pidOf(t, p, spec, Caller{Cwd: d1})
		if a1 == b || a1 != a2 {
			t.Errorf("cwd pids d1=%d,%d d2=%d", a1, a2, b)
		}
		if got := call(t, p, spec, Caller{Cwd: d2}, "cwd", `{}`); got != d2 {
			t.Errorf("server runs in %q, want the caller's %q", got, d2)
		}
	})
	t.Run("call", func(t *testing.T) {
		spec := fixtureSpec(t, config.Options{Scope: config.ScopeCall}, nil)
		a := pidOf(t, p, spec, Caller{})
		b := pidOf(t, p, spec, Caller{})
		if a == b {
			t.Errorf("call scope reused pid %d", a)
		}
		if n := p.Live(spec.Hash); n != 0 {
			t.Errorf("Live after call-scoped calls = %d, want 0", n)
		}
		eventually(t, "call-scoped servers to exit", func() bool { return processGone(a) && processGone(b) })
	})
}

func TestExclusiveMaxOneSerialises(t *testing.T) {
	p := newPools(t, Options{})
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{Sharing: config.SharingExclusive, Max: 1},
		map[string]string{fixture.StartedLogEnv: started})
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, p, spec, Caller{}, "slow", `{"seconds":0.5}`)
	}()
	// The slow call holds the only instance once the server runs it.
	eventually(t, "slow to hold the only instance", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) > 0
	})
	var pids sync.Map
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			pids.Store(pidOf(t, p, spec, Caller{Session: strconv.Itoa(i)}), true)
			// Answered only once the server finished the slow call (it
			// logs that just before its answer): nothing overtook it.
			if b, _ := os.ReadFile(started); !strings.Contains(string(b), "finished 0.5") {
				t.Errorf("a call overtook the exclusive holder; server log: %q", b)
			}
		})
	}
	wg.Wait()
	<-done
	n := 0
	pids.Range(func(any, any) bool { n++; return true })
	if n != 1 || p.Live(spec.Hash) != 1 {
		t.Errorf("max 1 ran %d distinct pids, Live %d", n, p.Live(spec.Hash))
	}
}

func TestExclusiveQueueTimesOut(t *testing.T) {
	p := newPools(t, Options{})
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{Sharing: config.SharingExclusive, Max: 1},
		map[string]string{fixture.StartedLogEnv: started})
	// The only instance is busy until the test ends, however slow the
	// machine (a slow call of fixed length could end before the queued
	// call's deadline).
	slowCtx, stopSlow := context.WithCancel(context.Background())
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		p.Call(slowCtx, spec, Caller{}, "slow", json.RawMessage(`{"seconds":600}`))
	}()
	defer func() { stopSlow(); <-slowDone }()
	eventually(t, "slow to hold the only instance", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, spec, Caller{}, "pid", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued call: %v, want the caller's deadline", err)
	}
}

func TestIdleStop(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{IdleTimeout: config.Duration(200 * time.Millisecond)}, nil)
	pid := pidOf(t, p, spec, Caller{})
	eventually(t, "the idle instance to stop", func() bool { return p.Live(spec.Hash) == 0 })
	eventually(t, "the idle process to exit", func() bool { return processGone(pid) })
	if pid2 := pidOf(t, p, spec, Caller{}); pid2 == pid {
		t.Errorf("a stopped instance was reused")
	}
}

func TestCloseStopsProcessGroups(t *testing.T) {
	p := New(Options{})
	p.stopGrace = 200 * time.Millisecond
	spec := fixtureSpec(t, config.Options{Scope: config.ScopeSession}, nil)
	a := pidOf(t, p, spec, Caller{Session: "a"})
	b := pidOf(t, p, spec, Caller{Session: "b"})
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{a, b} {
		if !processGone(pid) {
			t.Errorf("process group %d survived Close", pid)
		}
	}
	if _, err := p.Call(context.Background(), spec, Caller{}, "pid", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

func TestCrashMidCall(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	pid := pidOf(t, p, spec, Caller{})
	_, err := p.Call(context.Background(), spec, Caller{}, "crash", nil)
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v (%T), want *ExitError", err, err)
	}
	if !strings.Contains(ee.Stderr, "crash tool called") {
		t.Errorf("stderr tail %q lacks the server's last words", ee.Stderr)
	}
	if n := p.Live(spec.Hash); n != 0 {
		t.Errorf("Live after crash = %d", n)
	}
	if pid2 := pidOf(t, p, spec, Caller{}); pid2 == pid {
		t.Errorf("crashed instance reused")
	}
}

func TestDiesWhileIdle(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	pid := pidOf(t, p, spec, Caller{})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dead instance to be dropped", func() bool { return p.Live(spec.Hash) == 0 })
	if pid2 := pidOf(t, p, spec, Caller{}); pid2 == pid {
		t.Errorf("dead instance reused")
	}
}

func TestReplacedOnEnvDigest(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	spec.EnvDigest = "one"
	a := pidOf(t, p, spec, Caller{})
	spec.EnvDigest = "two"
	b := pidOf(t, p, spec, Caller{})
	if a == b {
		t.Errorf("instance with another env digest was reused")
	}
	eventually(t, "the old instance to go", func() bool { return processGone(a) })
	if n := p.Live(spec.Hash); n != 1 {
		t.Errorf("Live = %d, want 1", n)
	}
}

func TestRestartAndRetain(t *testing.T) {
	p := newPools(t, Options{})
	one := fixtureSpec(t, config.Options{}, nil)
	two := fixtureSpec(t, config.Options{}, nil)
	two.Hash += "-two"
	a := pidOf(t, p, one, Caller{})
	pidOf(t, p, two, Caller{})
	if n := p.Restart(context.Background(), one.Hash); n != 1 {
		t.Errorf("Restart = %d, want 1", n)
	}
	if !processGone(a) || p.Live(one.Hash) != 0 || p.Live(two.Hash) != 1 {
		t.Errorf("Restart(one) left one %d live (gone %v), two %d", p.Live(one.Hash), processGone(a), p.Live(two.Hash))
	}
	if b := pidOf(t, p, one, Caller{}); b == a {
		t.Errorf("restart reused pid")
	}
	p.Retain(context.Background(), map[config.ServerHash]bool{two.Hash: true})
	if p.Live(one.Hash) != 0 || p.Live(two.Hash) != 1 {
		t.Errorf("Retain(two): one %d, two %d", p.Live(one.Hash), p.Live(two.Hash))
	}
	if n := p.Restart(context.Background(), ""); n != 1 {
		t.Errorf("Restart(all) = %d, want 1", n)
	}
}

func TestListChanged(t *testing.T) {
	got := make(chan string, 4)
	var hash atomic.Value
	p := newPools(t, Options{OnListChanged: func(h config.ServerHash, kind string) {
		if h == hash.Load() {
			got <- kind
		}
	}})
	spec := fixtureSpec(t, config.Options{}, nil)
	hash.Store(spec.Hash)
	call(t, p, spec, Caller{}, "add_tool", `{"name":"brand_new"}`)
	select {
	case kind := <-got:
		if kind != "tools" {
			t.Errorf("kind = %q", kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed callback")
	}
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(toolNames(t, l.Tools), " "), "brand_new") {
		t.Errorf("new tool not listed")
	}
}

// network serves the fixture in-process over HTTP; sse selects HTTP+SSE.
func network(t *testing.T, sse bool) Spec {
	t.Helper()
	var h atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := &config.Server{Name: "net", Transport: config.TransportHTTP, URL: srv.URL + "/mcp",
		Headers: map[string]string{"X-Test": "1"}}
	if sse {
		h.Store(fixture.SSEHandler(fixture.Full(), srv.URL))
		s.Transport, s.URL = config.TransportSSE, srv.URL+"/sse"
	} else {
		h.Store(fixture.HTTPHandler(fixture.Full()))
	}
	return Spec{Server: s, Hash: config.ServerHash("net-" + s.Transport)}
}

func TestNetworkTransports(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "sse"}[sse], func(t *testing.T) {
			spec := network(t, sse) // first, so its server closes after the pools
			got := make(chan string, 4)
			p := newPools(t, Options{OnListChanged: func(_ config.ServerHash, kind string) { got <- kind }})
			if s := call(t, p, spec, Caller{}, "echo", `{"text":"over the wire"}`); s != "over the wire" {
				t.Errorf("echo = %q", s)
			}
			l, err := p.List(context.Background(), spec, Caller{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(toolNames(t, l.Tools), " "), "anyof") {
				t.Errorf("anyof missing")
			}
			// The fixture speaks 2025-11-25 over streamable HTTP, where
			// list changes travel on the GET stream that mcp-go opens
			// after the handshake, in the background: a change made
			// before the server holds that stream is told to nobody.
			// So tools are added until one change is told.
			deadline := time.After(10 * time.Second)
			for i := 0; ; i++ {
				call(t, p, spec, Caller{}, "add_tool", fmt.Sprintf(`{"name":"net_new_%d"}`, i))
				select {
				case kind := <-got:
					if kind != "tools" {
						t.Errorf("kind = %q", kind)
					}
				case <-time.After(200 * time.Millisecond):
					continue
				case <-deadline:
					t.Fatal("no list_changed callback")
				}
				break
			}
		})
	}
}

func TestSharedMaxEvictsIdle(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{Scope: config.ScopeSession, Max: 1}, nil)
	a := pidOf(t, p, spec, Caller{Session: "a"})
	b := pidOf(t, p, spec, Caller{Session: "b"})
	if a == b {
		t.Errorf("sessions shared pid %d", a)
	}
	if n := p.Live(spec.Hash); n != 1 {
		t.Errorf("Live = %d, want max 1", n)
	}
	eventually(t, "the evicted instance to exit", func() bool { return processGone(a) })
}

func TestHugeResult(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	const n = 4 << 20
	if got := call(t, p, spec, Caller{}, "huge", fmt.Sprintf(`{"bytes":%d}`, n)); len(got) != n {
		t.Errorf("huge returned %d bytes, want %d", len(got), n)
	}
}

// TestStderrClosedServerKept runs a server that closes its stderr at
// start: stderr EOF alone must not count as the server exiting.
func TestStderrClosedServerKept(t *testing.T) {
	p := newPools(t, Options{})
	spec := Spec{
		Server: &config.Server{Name: "quiet", Command: "sh", Args: []string{"-c", `exec "$0" 2>&-`, fixtureBin},
			Transport: config.TransportStdio},
		Hash: "quiet",
		Env:  os.Environ(),
	}
	a := pidOf(t, p, spec, Caller{})
	if b := pidOf(t, p, spec, Caller{}); b != a {
		t.Errorf("a live server was replaced: pid %d, then %d", a, b)
	}
	// Its death is found by the next call, not by stderr: that call fails
	// with *ExitError when its request was written before the process was
	// gone, and is answered by a fresh instance when not a byte of it
	// reached the dead one (the retry of a request that provably never
	// arrived).
	if err := syscall.Kill(a, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out, err := p.Call(context.Background(), spec, Caller{}, "pid", nil)
	var ee *ExitError
	switch {
	case err == nil:
		if got := text(t, out); got == strconv.Itoa(a) {
			t.Errorf("the killed server %d answered", a)
		}
	case !errors.As(err, &ee):
		t.Errorf("call to the killed server: %v, want *ExitError or an answer from a fresh instance", err)
	}
	if b := pidOf(t, p, spec, Caller{}); b == a {
		t.Errorf("the dead instance %d was kept", a)
	}
}

// TestCloseDuringStart closes the pools while a server hangs in its start:
// Close cuts the start short instead of waiting out startTimeout, and the
// process is gone when Close returns.
func TestCloseDuringStart(t *testing.T) {
	p := New(Options{})
	p.stopGrace = 200 * time.Millisecond
	pidFile := filepath.Join(t.TempDir(), "pid")
	spec := Spec{
		Server: &config.Server{Name: "hang", Command: "sh",
			Args:      []string{"-c", `echo $$ > "$0"; exec "$1"`, pidFile, fixtureBin},
			Env:       map[string]string{"FIXTURE_HANG_START": "1"},
			Transport: config.TransportStdio,
			Options:   config.Options{StartTimeout: config.Duration(time.Hour)}},
		Hash: "hang",
		Env:  os.Environ(),
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), spec, Caller{}, "echo", nil)
		done <- err
	}()
	var pid int
	eventually(t, "the server to start", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !processGone(pid) {
		t.Errorf("process group %d survived Close", pid)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("call whose start was cut short: %v, want ErrClosed", err)
	}
}

// TestCloseDuringSSEStart closes the pools while an SSE server keeps its
// event stream open without announcing the message endpoint: Close must
// cut the start short instead of waiting out startTimeout.
func TestCloseDuringSSEStart(t *testing.T) {
	hit := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		hit <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	p := New(Options{})
	spec := Spec{Server: &config.Server{Name: "mute", Transport: config.TransportSSE, URL: srv.URL + "/sse",
		Options: config.Options{StartTimeout: config.Duration(time.Hour)}}, Hash: "mute"}
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), spec, Caller{}, "echo", nil)
		done <- err
	}()
	<-hit
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("call whose start was cut short: %v, want ErrClosed", err)
	}
}

// TestRetainWakesQueuedCallers drops a pool whose only instance is busy
// while another caller queues for it: the queued caller must move on to a
// fresh instance, not wait for the dropped one.
func TestRetainWakesQueuedCallers(t *testing.T) {
	p := newPools(t, Options{})
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{Sharing: config.SharingExclusive, Max: 1},
		map[string]string{fixture.StartedLogEnv: started})
	first := pidOf(t, p, spec, Caller{})
	slowCtx, stopSlow := context.WithCancel(context.Background())
	defer stopSlow()
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		p.Call(slowCtx, spec, Caller{}, "slow", json.RawMessage(`{"seconds":600}`))
	}()
	eventually(t, "slow to hold the instance", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) > 0
	})
	queued := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		raw, err := p.Call(ctx, spec, Caller{}, "pid", nil)
		if err != nil {
			t.Errorf("queued call: %v", err)
			queued <- 0
			return
		}
		pid, _ := strconv.Atoi(text(t, raw))
		queued <- pid
	}()
	time.Sleep(200 * time.Millisecond) // most likely queued by now; either way it must not wait
	p.Retain(context.Background(), nil)
	if pid := <-queued; pid == first || pid == 0 {
		t.Errorf("queued call ran on pid %d (dropped instance %d)", pid, first)
	}
	stopSlow()
	<-slowDone
	eventually(t, "the dropped instance to stop once free", func() bool { return processGone(first) })
}

// TestErrorsHideURLSecrets: a token or password in a server URL (typically
// a ${VAR} value) appears in no error and no log line, whether the start
// fails or a request does.
func TestErrorsHideURLSecrets(t *testing.T) {
	const secret = "s3cret-token"
	var (
		mu   sync.Mutex
		logs []string
	)
	p := newPools(t, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(f, a...))
	}})
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error shows the secret: %v", what, err)
		}
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, tr := range []string{config.TransportHTTP, config.TransportSSE} {
		u := strings.Replace(dead.URL, "http://", "http://user:"+secret+"@", 1) + "/mcp?token=" + secret
		spec := Spec{Server: &config.Server{Name: "dead-" + tr, Transport: tr, URL: u}, Hash: config.ServerHash("dead-" + tr)}
		_, err := p.Call(context.Background(), spec, Caller{}, "echo", nil)
		var se *StartError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want *StartError", tr, err)
		}
		check(tr+" start", err)
	}

	live := httptest.NewServer(fixture.HTTPHandler(fixture.Full()))
	spec := Spec{Server: &config.Server{Name: "live", Transport: config.TransportHTTP, URL: live.URL + "/mcp?token=" + secret},
		Hash: "live"}
	call(t, p, spec, Caller{}, "echo", `{"text":"up"}`)
	live.CloseClientConnections()
	live.Close()
	_, err := p.Call(context.Background(), spec, Caller{}, "echo", json.RawMessage(`{"text":"down"}`))
	check("call after the server went away", err)

	mu.Lock()
	defer mu.Unlock()
	for _, l := range logs {
		if strings.Contains(l, secret) {
			t.Errorf("log shows the secret: %s", l)
		}
	}
}

// A nil Spec.Env is empty: nothing of the daemon's own environment reaches
// a server (DESIGN §2: the daemon runs with the service manager's
// environment, not the user's).
func TestNilEnvInheritsNothing(t *testing.T) {
	t.Setenv("MCPX_DAEMON_ONLY", "leaked")
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	spec.Env = nil
	if got := call(t, p, spec, Caller{}, "env", `{"name":"MCPX_DAEMON_ONLY"}`); got != "" {
		t.Fatalf("the daemon's variable reached the server: %q", got)
	}
}

// callTimeout bounds the whole call: time spent queueing for the one
// exclusive instance counts, so a call that waits 1.8 s for it and then runs
// for 1.5 s is cut off at 2 s instead of getting a fresh budget.
func TestCallTimeoutIncludesQueueing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a call timeout (-short)")
	}
	p := newPools(t, Options{})
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{Sharing: config.SharingExclusive, Max: 1, CallTimeout: config.Duration(2 * time.Second)},
		map[string]string{fixture.StartedLogEnv: started})
	first := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), spec, Caller{}, "slow", json.RawMessage(`{"seconds":1.8}`))
		first <- err
	}()
	eventually(t, "the first call to hold the instance", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) > 0
	})
	_, err := p.Call(context.Background(), spec, Caller{}, "slow", json.RawMessage(`{"seconds":1.5}`))
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("queued then slow call: %v, want a TimeoutError", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first call: %v", err)
	}
}

// A stdio server runs where its entry says (cwd), else in the caller's
// directory for scope cwd, else in its project directory (Server.Dir), else
// in the HOME of its environment: never in the daemon's working directory.
func TestWorkDir(t *testing.T) {
	p := newPools(t, Options{})
	project, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	caller, _ := filepath.EvalSymlinks(t.TempDir())
	sub := filepath.Join(project, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cwd, dir  string
		scope     string
		want      string
		callerDir string
	}{
		{name: "project", dir: project, want: project},
		{name: "cwd", cwd: sub, dir: project, want: sub},
		{name: "scope-cwd", dir: project, scope: config.ScopeCwd, callerDir: caller, want: caller},
		{name: "builtin", want: home},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fixtureSpec(t, config.Options{Scope: tc.scope}, nil)
			spec.Server.Cwd, spec.Server.Dir = tc.cwd, tc.dir
			spec.Env = append(slices.DeleteFunc(slices.Clone(spec.Env), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }), "HOME="+home)
			if got := call(t, p, spec, Caller{Cwd: tc.callerDir}, "cwd", `{}`); got != tc.want {
				t.Errorf("server runs in %q, want %q", got, tc.want)
			}
		})
	}
}
