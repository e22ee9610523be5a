package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// copyBinaries puts copies of the binaries under test into a fresh
// directory under bin/ (units refuse temporary build directories), so a
// test can change them without touching other tests' binaries.
func copyBinaries(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(repoRoot, "bin"), "upgrade-calls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, bin := range []string{mcpxBin, mcpxdBin} {
		if out, err := exec.Command("cp", bin, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
	}
	return dir
}

// bgCommand is a command started in the background.
type bgCommand struct {
	cmd          *exec.Cmd
	stdout, errb bytes.Buffer
	done         chan struct{}
	code         int
	what         string
}

func (e *Env) startBackground(t *testing.T, what, bin string, args ...string) *bgCommand {
	t.Helper()
	r := &bgCommand{cmd: exec.Command(bin, args...), done: make(chan struct{}), what: what}
	r.cmd.Dir, r.cmd.Env = e.Work, e.Environ()
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.errb
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		if err := r.cmd.Wait(); err != nil {
			r.code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				r.code = ee.ExitCode()
			}
		}
	}()
	t.Cleanup(func() { r.cmd.Process.Kill(); <-r.done })
	return r
}

func (r *bgCommand) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *bgCommand) String() string {
	return r.what + ": exit " + strconv.Itoa(r.code) + "\nstdout: " + r.stdout.String() + "\nstderr: " + r.errb.String()
}

// upgradeDuringLongCalls installs a new build (a touch of mcpxd: the client
// tells builds by path, size and modification time) while two 14 s calls
// run, one plain and one streamed to a terminal (through script), the
// latter being the command that finds the old daemon. Both finish, and a
// call from another process meanwhile is answered at once by the new
// daemon, while the long calls still run in the old one. It returns the
// daemon key and the pids of the old and the new daemon.
func upgradeDuringLongCalls(t *testing.T, e *Env) (key string, oldPid, newPid int) {
	dir := copyBinaries(t)
	e.Bin = filepath.Join(dir, "mcpx")
	started := filepath.Join(e.Root, "started.log")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {"demo": {"command": `+
		jsonString(filepath.Join(dir, "mcpxd"))+`, "args": ["demo-server"], "env": {"FIXTURE_STARTED_LOG": `+jsonString(started)+`}}}}`)
	if r := e.MustOK("call", "demo.echo", "text=warm"); r.Stdout != "warm" {
		t.Fatalf("warm call:\n%s", r)
	}
	var st statusDoc
	e.JSON(&st, "status")
	key, oldPid = st.DaemonKey, st.Service.PID
	if oldPid == 0 {
		t.Fatalf("status before the upgrade: %+v", st)
	}
	slowStarted := func(n int) {
		t.Helper()
		testkit.Eventually(t, 60*time.Second, "the slow calls to start in the server", func() bool {
			b, _ := os.ReadFile(started)
			return strings.Count(string(b), "started 14") >= n
		})
	}

	plain := e.startBackground(t, "plain slow call", e.Bin, "call", "demo.slow", "seconds=14")
	slowStarted(1)
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(dir, "mcpxd"), now, now); err != nil {
		t.Fatal(err)
	}
	term := e.startBackground(t, "slow call on a terminal", "script", "-qec", e.Bin+" call demo.slow seconds=14", "/dev/null")
	slowStarted(2)

	testkit.Eventually(t, 60*time.Second, "the new daemon to take over the socket", func() bool {
		var st statusDoc
		e.JSON(&st, "status")
		return st.Service.PID != 0 && st.Service.PID != oldPid
	})
	second := e.Mcpx("call", "demo.echo", "text=second")
	if second.Code != 0 || second.Stdout != "second" {
		t.Fatalf("a call during the upgrade:\n%s", second)
	}
	if plain.finished() || term.finished() {
		t.Errorf("the call during the upgrade was answered only after a long call ended (not by the new daemon at once):\n%s\n%s", plain, term)
	}
	<-plain.done
	<-term.done
	if plain.code != 0 || plain.stdout.String() != "slept 14 seconds" {
		t.Errorf("the plain call across the upgrade:\n%s", plain)
	}
	if term.code != 0 || !strings.Contains(term.stdout.String(), "slept 14 seconds") {
		t.Errorf("the streamed call across the upgrade:\n%s", term)
	}
	e.JSON(&st, "status")
	if st.Service.State != "running" || st.Service.PID == oldPid {
		t.Errorf("status after the upgrade: %+v", st.Service)
	}
	if r := e.MustOK("call", "demo.echo", "text=after"); r.Stdout != "after" {
		t.Errorf("call after the upgrade:\n%s", r)
	}
	if r := e.MustOK("doctor"); strings.Contains(r.Stdout, "older build") {
		t.Errorf("doctor after the upgrade still reports an older daemon:\n%s", r)
	}
	testkit.Eventually(t, 60*time.Second, "the old daemon to exit", func() bool { return !proc.Alive(oldPid) })
	return key, oldPid, st.Service.PID
}

func TestUpgradeCutsNoLongCallDirect(t *testing.T) {
	upgradeDuringLongCalls(t, NewEnv(t))
}

// Under systemd the new daemon is the unit's main process: the unit stays
// active after the old one exits, and stops cleanly.
func TestUpgradeCutsNoLongCallSystemd(t *testing.T) {
	e, m := newSystemdEnv(t)
	key, _, newPid := upgradeDuringLongCalls(t, e)
	unit := "mcpx@" + key + ".service"
	if svc := m.Show(t, unit, "ActiveState", "MainPID"); svc["ActiveState"] != "active" || svc["MainPID"] != strconv.Itoa(newPid) {
		t.Fatalf("%s after the old daemon exited: %v, want active with main pid %d", unit, svc, newPid)
	}
	if _, err := m.Systemctl("stop", "--no-block", unit); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 2*time.Minute, "the service to stop", func() bool {
		return unitState(t, m, unit) != "deactivating" && !proc.Alive(newPid)
	})
	if got := unitState(t, m, unit); got != "inactive" {
		out, _ := m.Systemctl("status", unit)
		t.Errorf("after stop the service is %s, want inactive (systemd did not follow the new daemon as its main process)\n%s", got, out)
	}
}

// A restart of the service (systemctl restart: SIGTERM, then a new start)
// lets a 14 s call in flight finish, longer than the old 10 s grace; a call
// made meanwhile waits in the socket systemd keeps and is answered by the
// new daemon.
func TestServiceRestartCutsNoLongCall(t *testing.T) {
	e, m := newSystemdEnv(t)
	started := filepath.Join(e.Root, "started.log")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {"demo": {"command": `+
		jsonString(mcpxdBin)+`, "args": ["demo-server"], "env": {"FIXTURE_STARTED_LOG": `+jsonString(started)+`}}}}`)
	e.MustOK("call", "demo.echo", "text=warm")
	var st statusDoc
	e.JSON(&st, "status")
	slow := e.startBackground(t, "slow call", mcpxBin, "call", "demo.slow", "seconds=14")
	testkit.Eventually(t, 60*time.Second, "the slow call to start in the server", func() bool {
		b, _ := os.ReadFile(started)
		return strings.Contains(string(b), "started 14")
	})
	if _, err := m.Systemctl("restart", "--no-block", "mcpx@"+st.DaemonKey+".service"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "the old daemon to stop accepting", func() bool {
		return unitState(t, m, "mcpx@"+st.DaemonKey+".service") != "active"
	})
	if r := e.Mcpx("call", "demo.echo", "text=during"); r.Code != 0 || r.Stdout != "during" {
		t.Errorf("a call during the restart:\n%s", r)
	}
	<-slow.done
	if slow.code != 0 || slow.stdout.String() != "slept 14 seconds" {
		t.Errorf("the call across the restart:\n%s", slow)
	}
}
