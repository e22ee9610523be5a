package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/systemdtest"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// statusDoc is the part of `mcpx status --json` these tests read.
type statusDoc struct {
	DaemonKey string   `json:"daemonKey"`
	Configs   []string `json:"configs"`
	Manager   string   `json:"manager"`
	Units     []string `json:"units"`
	Socket    struct {
		Path  string `json:"path"`
		State string `json:"state"`
	} `json:"socket"`
	Service struct {
		State    string `json:"state"`
		PID      int    `json:"pid"`
		LastExit string `json:"lastExit"`
	} `json:"service"`
	Live *struct {
		Servers int `json:"servers"`
	} `json:"live"`
}

// newSystemdEnv is a hermetic user whose commands reach a real, hermetic
// systemd user manager, with MCPX_SERVICE unset (auto detection).
func newSystemdEnv(t *testing.T) (*Env, *systemdtest.Manager) {
	t.Helper()
	m := systemdtest.Start(t)
	e := NewEnv(t)
	e.Home, e.Run = m.Home(), m.RuntimeDir()
	delete(e.extra, "MCPX_SERVICE")
	for _, kv := range m.Env() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "XDG_RUNTIME_DIR", "LANG":
		default:
			e.Set(k, v)
		}
	}
	return e, m
}

func unitState(t *testing.T, m *systemdtest.Manager, unit string) string {
	t.Helper()
	return m.Show(t, unit, "ActiveState")["ActiveState"]
}

func TestActivationFirstCallStartsTheServiceFromTheSocket(t *testing.T) {
	e, m := newSystemdEnv(t)
	r := e.MustOK("install")
	for _, f := range []string{"mcpx@.socket", "mcpx@.service"} {
		if _, err := os.Stat(filepath.Join(m.UnitDir(), f)); err != nil {
			t.Fatalf("install did not write %s: %v\n%s", f, err, r)
		}
	}
	verifyUnits(t, m)

	if r := e.MustOK("call", "demo.echo", "text=hi"); r.Stdout != "hi" {
		t.Fatalf("first call:\n%s", r)
	}
	svc := m.Show(t, "mcpx@builtin.service", "ActiveState", "TriggeredBy", "StatusText", "MainPID")
	if svc["ActiveState"] != "active" || !strings.Contains(svc["TriggeredBy"], "mcpx@builtin.socket") {
		t.Fatalf("service after first call: %v", svc)
	}
	if !regexp.MustCompile(`\d+ servers?, \d+ live, \d+ calls?`).MatchString(svc["StatusText"]) {
		t.Fatalf("StatusText %q", svc["StatusText"])
	}
	out, _ := m.Systemctl("status", "mcpx@builtin")
	if !strings.Contains(out, "Status: \""+svc["StatusText"]) && !strings.Contains(out, "Status: \"") {
		t.Fatalf("systemctl --user status shows no Status line:\n%s", out)
	}
	// The daemon got its listener from systemd, not by binding.
	environ, err := os.ReadFile("/proc/" + svc["MainPID"] + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(environ), "LISTEN_FDNAMES=mcpx\x00") {
		t.Fatalf("daemon %s was not started with LISTEN_FDNAMES=mcpx", svc["MainPID"])
	}
	var st statusDoc
	e.JSON(&st, "status")
	if st.Manager != "systemd" || st.Service.State != "running" || fmt.Sprint(st.Service.PID) != svc["MainPID"] ||
		st.Socket.State != "listening" || st.Live == nil {
		t.Fatalf("status --json while running: %+v", st)
	}
}

// verifyUnits runs systemd-analyze --user verify on instances of the
// installed templates.
func verifyUnits(t *testing.T, m *systemdtest.Manager) {
	t.Helper()
	dir := t.TempDir()
	for _, ext := range []string{"socket", "service"} {
		b, err := os.ReadFile(filepath.Join(m.UnitDir(), "mcpx@."+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mcpx@verify."+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("systemd-analyze", "--user", "verify",
		filepath.Join(dir, "mcpx@verify.socket"), filepath.Join(dir, "mcpx@verify.service"))
	cmd.Env = m.Env()
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze --user verify: %v\n%s", err, out)
	}
}

func TestStatusNeverActivates(t *testing.T) {
	e, m := newSystemdEnv(t)

	// Nothing installed: status says so and installs nothing.
	var st statusDoc
	e.JSON(&st, "status")
	if st.Service.State != "not-installed" {
		t.Fatalf("before install: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(m.UnitDir(), "mcpx@.service")); err == nil {
		t.Fatal("status installed units")
	}

	e.MustOK("call", "demo.echo", "text=x") // installs on first use and activates
	// Not a synchronous `systemctl stop`: its client gives up after 30 s,
	// as long as the unit's TimeoutStopSec, so a slow machine failed the
	// test. Queue the stop and wait, generously, for the daemon to have
	// exited by itself (inactive, not failed: systemd did not have to kill
	// it).
	if _, err := m.Systemctl("stop", "--no-block", "mcpx@builtin.service"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 2*time.Minute, "the service to stop", func() bool {
		return unitState(t, m, "mcpx@builtin.service") != "deactivating"
	})
	if got := unitState(t, m, "mcpx@builtin.service"); got != "inactive" {
		t.Fatalf("after stop the service is %s, want inactive", got)
	}
	// Socket only: the socket listens, the service is inactive, and both
	// forms of status leave it that way.
	for _, args := range [][]string{{"status"}, {"--json", "status"}} {
		r := e.MustOK(args...)
		if got := unitState(t, m, "mcpx@builtin.service"); got != "inactive" {
			t.Fatalf("`mcpx %s` activated the service (ActiveState %s)\n%s", strings.Join(args, " "), got, r)
		}
	}
	e.JSON(&st, "status")
	if st.Socket.State != "listening" || st.Service.State != "idle" || st.Live != nil {
		t.Fatalf("socket only: %+v", st)
	}
	if got := unitState(t, m, "mcpx@builtin.service"); got != "inactive" {
		t.Fatalf("status --json activated the service: %s", got)
	}

	// Failed: the daemon is killed; status reports the failure.
	e.MustOK("call", "demo.echo", "text=x")
	if _, err := m.Systemctl("kill", "--signal=KILL", "mcpx@builtin.service"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "the service to fail", func() bool {
		return unitState(t, m, "mcpx@builtin.service") == "failed"
	})
	e.JSON(&st, "status")
	if st.Service.State != "failed" || st.Service.LastExit == "" {
		t.Fatalf("failed: %+v", st)
	}
	if got := unitState(t, m, "mcpx@builtin.service"); got != "failed" {
		t.Fatalf("status changed the failed service to %s", got)
	}
	// The next call starts it again.
	if r := e.MustOK("call", "demo.echo", "text=again"); r.Stdout != "again" {
		t.Fatalf("call after failure:\n%s", r)
	}
}

func TestRestartsUnderLoadLoseNoCall(t *testing.T) {
	e, m := newSystemdEnv(t)
	e.MustOK("call", "demo.echo", "text=warm")

	const calls = 200
	var failed []string
	var mu sync.Mutex
	done := make(chan struct{})
	progress := make(chan int, calls)
	go func() {
		defer close(done)
		for i := 0; i < calls; i++ {
			want := fmt.Sprintf("c%d", i)
			r := e.Mcpx("call", "demo.echo", "text="+want)
			if r.Code != 0 || r.Stdout != want {
				mu.Lock()
				failed = append(failed, r.String())
				mu.Unlock()
			}
			progress <- i
		}
	}()
	restarts := 0
	for i := range progress {
		if (i == 40 || i == 120) && restarts < 2 {
			if _, err := m.Systemctl("restart", "mcpx@builtin.service"); err != nil {
				t.Errorf("restart: %v", err)
			}
			restarts++
		}
		if i == calls-1 {
			break
		}
	}
	<-done
	if restarts != 2 {
		t.Fatalf("restarted %d times, want 2", restarts)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d calls failed across two restarts; first:\n%s", len(failed), calls, failed[0])
	}
}

// daemonPIDs are the live mcpx daemon processes for key started from the
// binary under test.
func daemonPIDs(key string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		var pid int
		if _, err := fmt.Sscanf(ent.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " ") == mcpxdBin+" daemon --key "+key {
			pids = append(pids, pid)
		}
	}
	return pids
}

func concurrentFirstCalls(t *testing.T, e *Env) {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]Result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.Mcpx("call", "demo.echo", fmt.Sprintf("text=r%d", i))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.Code != 0 || r.Stdout != fmt.Sprintf("r%d", i) {
			t.Fatalf("concurrent call %d:\n%s", i, r)
		}
	}
	if pids := daemonPIDs("builtin"); len(pids) != 1 {
		t.Fatalf("20 concurrent first calls left %d daemon processes: %v", len(pids), pids)
	}
}

func TestConcurrentFirstCallsStartOneDaemonSystemd(t *testing.T) {
	e, m := newSystemdEnv(t)
	concurrentFirstCalls(t, e)
	if n := m.Show(t, "mcpx@builtin.service", "NRestarts")["NRestarts"]; n != "0" {
		t.Fatalf("NRestarts %s", n)
	}
}

func TestConcurrentFirstCallsStartOneDaemonDirect(t *testing.T) {
	concurrentFirstCalls(t, NewEnv(t))
}

func TestIdleExitLeavesTheSocketListening(t *testing.T) {
	e, m := newSystemdEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{
  "mcpx": {"idleExit": "2s", "idleTimeout": "1s"},
  "mcpServers": {"fx": {"command": %s}}
}`, jsonString(fixtureBin)))
	e.MustOK("call", "fx.echo", "text=x")
	var st statusDoc
	e.JSON(&st, "status")
	svc, sock := "mcpx@"+st.DaemonKey+".service", "mcpx@"+st.DaemonKey+".socket"
	testkit.Eventually(t, 30*time.Second, "the idle daemon to exit", func() bool {
		return unitState(t, m, svc) == "inactive"
	})
	const started = "ExecMainStartTimestampMonotonic"
	first := m.Show(t, svc, started)[started]
	if got := unitState(t, m, sock); got != "active" {
		t.Fatalf("socket after idle exit: %s", got)
	}
	if r := e.MustOK("call", "fx.echo", "text=back"); r.Stdout != "back" {
		t.Fatalf("call after idle exit:\n%s", r)
	}
	// The socket started the service again. (Not "it is active now": on a
	// slow machine it may already have gone idle again.)
	if again := m.Show(t, svc, started)[started]; again == first || again == "" || again == "0" {
		t.Fatalf("service not started again by the socket: %s %s, then %s", started, first, again)
	}
}

func TestDirectManagerBehavesTheSame(t *testing.T) {
	e := NewEnv(t) // MCPX_SERVICE=direct
	var st statusDoc
	e.JSON(&st, "status")
	if st.Manager != "direct" || st.Service.State == "running" {
		t.Fatalf("status before any call: %+v", st)
	}
	if r := e.MustOK("call", "demo.echo", "text=hi"); r.Stdout != "hi" {
		t.Fatalf("call:\n%s", r)
	}
	e.MustOK("ls")
	e.JSON(&st, "status")
	pids := daemonPIDs("builtin")
	if st.Manager != "direct" || st.Service.State != "running" || len(pids) != 1 || st.Service.PID != pids[0] || st.Live == nil {
		t.Fatalf("status while running: %+v (daemon pids %v)", st, pids)
	}
	e.MustOK("stop")
	testkit.Eventually(t, 60*time.Second, "the daemon to exit", func() bool { return len(daemonPIDs("builtin")) == 0 })
	e.JSON(&st, "status")
	if st.Service.State == "running" || st.Live != nil {
		t.Fatalf("status after stop: %+v", st)
	}
	if len(daemonPIDs("builtin")) != 0 {
		t.Fatal("status started a daemon")
	}
}

func TestStopKeepsTheSocketUnlessAsked(t *testing.T) {
	e, m := newSystemdEnv(t)
	e.MustOK("call", "demo.echo", "text=x")
	e.MustOK("stop")
	if svc, sock := unitState(t, m, "mcpx@builtin.service"), unitState(t, m, "mcpx@builtin.socket"); svc != "inactive" || sock != "active" {
		t.Fatalf("after stop: service %s, socket %s", svc, sock)
	}
	// Stopping and re-activating is routine: more often than systemd's
	// default start limit (5 in 10 s) must keep working.
	for i := range 8 {
		want := fmt.Sprintf("again%d", i)
		if r := e.MustOK("call", "demo.echo", "text="+want); r.Stdout != want {
			t.Fatalf("call %d after stop:\n%s", i, r)
		}
		if _, err := m.Systemctl("stop", "mcpx@builtin.service"); err != nil {
			t.Fatal(err)
		}
	}
	e.MustOK("stop", "--socket")
	if svc, sock := unitState(t, m, "mcpx@builtin.service"), unitState(t, m, "mcpx@builtin.socket"); svc != "inactive" || sock != "inactive" {
		t.Fatalf("after stop --socket: service %s, socket %s", svc, sock)
	}
	var st statusDoc
	e.JSON(&st, "status")
	if st.Socket.State != "absent" || st.Service.State == "running" {
		t.Fatalf("status after stop --socket: %+v", st)
	}
	// The next command sets the socket up again and activates the daemon.
	if r := e.MustOK("call", "demo.echo", "text=back"); r.Stdout != "back" {
		t.Fatalf("call after stop --socket:\n%s", r)
	}
}
