package service

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/systemdtest"
	"github.com/mcpx-dev/mcpx/launchd"
)

// The Manager contract (DESIGN §5), one suite run against every
// implementation: systemd under a real hermetic user manager, launchd with
// a fake launchctl that holds the socket and starts a job on its first
// connection as launchd does (the parts of launchd that can run on
// Linux), and direct with this test binary as the daemon it spawns.
func TestManagerConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T) conformer
	}{
		{NameSystemd, systemdConformer},
		{NameLaunchd, launchdConformer},
		{NameDirect, directConformer},
	} {
		t.Run(tc.name, func(t *testing.T) { conform(t, tc.make(t)) })
	}
}

// conformer is one Manager under the suite, and what the suite needs to
// look behind it without asking the Manager.
type conformer struct {
	mgr    Manager
	socket func(config.DaemonKey) string
	// lazy managers hold the socket and start the daemon on its first
	// connection (systemd, launchd); the direct manager starts it in
	// Ensure.
	lazy bool
	// templates: Installed is false before Install and after Uninstall
	// (systemd's unit templates; launchd writes an agent per key, direct
	// has nothing to install).
	templates bool
	// running reports, from the service manager's own bookkeeping and
	// never through the socket, whether key's daemon process runs.
	running func(config.DaemonKey) bool
}

func conform(t *testing.T, c conformer) {
	ctx := context.Background()
	key := config.DaemonKey("c0ffee00c0de")
	checkInstall(t, c)

	st := stateOf(t, c, key)
	if st.Key != key || st.Manager != c.mgr.Name() || st.Socket != SocketAbsent || st.Service == ServiceRunning || st.Serving() {
		t.Fatalf("State before Ensure = %+v; want the key and manager named, no socket, nothing running", st)
	}

	// Ensure makes the socket (the direct manager binds it and spawns the
	// daemon, without waiting for it); State never connects, so a lazy
	// manager's daemon is still not started however often it is asked.
	must(t, "Ensure", c.mgr.Ensure(ctx, key))
	ino := socketInode(t, c.socket(key))
	for range 3 {
		st = stateOf(t, c, key)
	}
	switch {
	case st.Socket != SocketListening:
		t.Fatalf("State after Ensure = %+v; want the socket listening", st)
	case c.lazy && (c.running(key) || st.Service == ServiceRunning):
		t.Fatalf("State after Ensure = %+v, daemon running %v: Ensure or State started a socket-activated daemon", st, c.running(key))
	}

	// Connecting reaches a daemon (activating it); Ensure again is cheap
	// and idempotent: the same socket, the same daemon.
	first := askDaemon(t, c.socket(key))
	st = waitState(t, c, key, func(st State) bool { return st.Serving() })
	if st.PID == 0 || first != "ok "+strconv.Itoa(st.PID) || !c.running(key) {
		t.Fatalf("State of a serving daemon = %+v (it answered %q, running %v)", st, first, c.running(key))
	}
	for range 2 {
		must(t, "Ensure again", c.mgr.Ensure(ctx, key))
	}
	if got := askDaemon(t, c.socket(key)); got != first || socketInode(t, c.socket(key)) != ino {
		t.Fatalf("after Ensure again the socket answered %q (was %q), inode %d (was %d): Ensure is not idempotent", got, first, socketInode(t, c.socket(key)), ino)
	}

	all, err := c.mgr.List(ctx)
	must(t, "List", err)
	if i := slices.IndexFunc(all, func(s State) bool { return s.Key == key }); i < 0 || all[i].Manager != c.mgr.Name() || all[i].Service != ServiceRunning {
		t.Fatalf("List = %+v; want %s running", all, key)
	}

	// Stop stops the daemon; a lazy manager keeps the socket, and the
	// next connection starts a new daemon.
	must(t, "Stop", c.mgr.Stop(ctx, key, false))
	st = waitState(t, c, key, func(st State) bool { return st.Service != ServiceRunning })
	if c.running(key) || c.lazy && st.Socket != SocketListening {
		t.Fatalf("State after Stop = %+v (running %v); want the daemon gone and a lazy manager's socket kept", st, c.running(key))
	}
	must(t, "Ensure after Stop", c.mgr.Ensure(ctx, key))
	if again := askDaemon(t, c.socket(key)); !strings.HasPrefix(again, "ok ") || again == first {
		t.Fatalf("after Stop and Ensure the socket answered %q; want a new daemon (the first said %q)", again, first)
	}

	// Stop with the socket leaves nothing listening.
	must(t, "Stop with the socket", c.mgr.Stop(ctx, key, true))
	st = waitState(t, c, key, func(st State) bool { return st.Service != ServiceRunning && st.Socket == SocketAbsent })
	if c.running(key) {
		t.Fatalf("State after Stop with the socket = %+v, but the daemon runs", st)
	}
	checkUninstall(t, c, key)
}

// checkInstall: Install is idempotent and makes Installed true.
func checkInstall(t *testing.T, c conformer) {
	ok, err := c.mgr.Installed()
	must(t, "Installed", err)
	if c.templates && ok {
		t.Fatal("Installed before Install")
	}
	for range 2 {
		must(t, "Install", c.mgr.Install())
	}
	if ok, err := c.mgr.Installed(); !ok || err != nil {
		t.Fatalf("Installed after Install = %v, %v", ok, err)
	}
}

// checkUninstall: Uninstall is idempotent; afterwards a manager with
// templates says so, and nothing of key is left.
func checkUninstall(t *testing.T, c conformer, key config.DaemonKey) {
	for range 2 {
		must(t, "Uninstall", c.mgr.Uninstall())
	}
	st := stateOf(t, c, key)
	if st.Socket != SocketAbsent || st.Service == ServiceRunning {
		t.Fatalf("State after Uninstall = %+v", st)
	}
	if !c.templates {
		return
	}
	if ok, err := c.mgr.Installed(); ok || err != nil {
		t.Fatalf("Installed after Uninstall = %v, %v", ok, err)
	}
	if st.Service != ServiceNotInstalled {
		t.Fatalf("State after Uninstall = %+v; want %s", st, ServiceNotInstalled)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func stateOf(t *testing.T, c conformer, key config.DaemonKey) State {
	t.Helper()
	st, err := c.mgr.State(context.Background(), key)
	must(t, "State", err)
	return st
}

// waitState polls State until ok accepts it (bounded, never timed).
func waitState(t *testing.T, c conformer, key config.DaemonKey, ok func(State) bool) State {
	t.Helper()
	return waitFor(t, c.mgr, key, ok)
}

// askDaemon connects to the socket and reads the daemon's one line ("ok
// <pid>" from every fake daemon here).
func askDaemon(t *testing.T, sock string) string {
	t.Helper()
	conn, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		t.Fatalf("connect to %s: %v", sock, err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read from %s: %v", sock, err)
	}
	return strings.TrimSpace(line)
}

func socketInode(t *testing.T, sock string) uint64 {
	t.Helper()
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %s: %v, %v", sock, fi, err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// systemdConformer: the units under a real hermetic user manager, with
// systemdtest's fake daemon as the service.
func systemdConformer(t *testing.T) conformer {
	m := systemdtest.Start(t) // skipped with -short
	getenv, paths := hermetic(t, m, nil)
	return conformer{
		mgr:       NewSystemd(getenv, paths, m.FakeDaemon(t)),
		socket:    paths.Socket,
		lazy:      true,
		templates: true,
		running: func(key config.DaemonKey) bool {
			as := m.Show(t, "mcpx@"+string(key)+".service", "ActiveState")["ActiveState"]
			return as == "active" || as == "activating" || as == "deactivating"
		},
	}
}

// directConformer: the direct manager spawning this test binary as the
// daemon (TestMain, fakeDaemon).
func directConformer(t *testing.T) conformer {
	d, count := setup(t, "ok")
	return conformer{
		mgr:    d,
		socket: d.Paths.Socket,
		running: func(config.DaemonKey) bool {
			pids := starts(t, count)
			if len(pids) == 0 {
				return false
			}
			pid, _ := strconv.Atoi(pids[len(pids)-1])
			return proc.Alive(pid)
		},
	}
}

// launchdConformer: the launchd manager with a fake launchctl.
func launchdConformer(t *testing.T) conformer {
	root, err := os.MkdirTemp("", "lc") // short: socket paths stay under 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	bin := filepath.Join(root, "mcpxd")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	agents := launchd.New(func(k string) string { return map[string]string{"HOME": root}[k] }, bin)
	agents.Domain = "gui/501"
	agents.Wait = func(context.Context, time.Duration) {}
	f := &fakeLaunchctl{t: t, domain: agents.Domain, jobs: map[string]*fakeJob{}, pid: 70000}
	agents.Launchctl = f.run
	t.Cleanup(f.close)
	paths := config.Paths{Runtime: filepath.Join(root, "run"), State: filepath.Join(root, "state")}
	return conformer{
		mgr:    &Launchd{Agents: agents, Paths: paths, Self: bin},
		socket: paths.Socket,
		lazy:   true,
		running: func(key config.DaemonKey) bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			j := f.jobs[launchd.Label(string(key))]
			return j != nil && j.pid != 0
		},
	}
}

// fakeLaunchctl plays launchd for the agents of one domain, the parts the
// Manager uses: bootstrap reads the plist and listens on its socket path;
// the first connection starts the job (a process is played by a pid
// number, which the job answers every connection with); kill stops the
// job and keeps the socket; bootout closes the socket and unloads it;
// print describes a job as launchctl does.
type fakeLaunchctl struct {
	t      *testing.T
	domain string
	mu     sync.Mutex
	jobs   map[string]*fakeJob // by label
	pid    int                 // the last pid given
}

type fakeJob struct {
	program string
	ln      net.Listener
	pid     int // 0: not running
}

func (f *fakeLaunchctl) run(_ context.Context, args ...string) ([]byte, []byte, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	label := ""
	if len(args) > 1 {
		label = strings.TrimPrefix(args[len(args)-1], f.domain+"/")
	}
	j := f.jobs[label]
	switch {
	case args[0] == "print-disabled":
		return nil, nil, 0, nil
	case args[0] == "bootstrap" && len(args) == 3 && args[1] == f.domain:
		return f.bootstrap(args[2])
	case j == nil && (args[0] == "print" || args[0] == "bootout" || args[0] == "kill"):
		return nil, []byte(`Could not find service "` + label + `" in domain for port`), 113, nil
	case args[0] == "print":
		return []byte(fmt.Sprintf("%s/%s = {\n\tstate = %s\n\tpid = %d\n\tprogram = %s\n\tsockets = {\n\t\tmcpx = {\n\t\t\ttype = stream\n\t\t}\n\t}\n}\n",
			f.domain, label, map[bool]string{true: "running", false: "not running"}[j.pid != 0], j.pid, j.program)), nil, 0, nil
	case args[0] == "kill":
		j.pid = 0
		return nil, nil, 0, nil
	case args[0] == "bootout":
		j.ln.Close()
		delete(f.jobs, label)
		return nil, nil, 0, nil
	}
	f.t.Errorf("unexpected launchctl %v", args)
	return nil, nil, 1, nil
}

func (f *fakeLaunchctl) bootstrap(plist string) ([]byte, []byte, int, error) {
	label := strings.TrimSuffix(filepath.Base(plist), ".plist")
	if f.jobs[label] != nil {
		return nil, []byte("Bootstrap failed: 5: Input/output error"), 5, nil
	}
	b, err := os.ReadFile(plist)
	if err != nil {
		return nil, []byte(err.Error()), 2, nil
	}
	sock := plistString(string(b), "SockPathName")
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, []byte(err.Error()), 5, nil
	}
	j := &fakeJob{program: plistString(string(b), "ProgramArguments"), ln: ln}
	f.jobs[label] = j
	go f.serve(j)
	return nil, nil, 0, nil
}

// serve answers each connection with the job's pid, starting the job
// first when it does not run.
func (f *fakeLaunchctl) serve(j *fakeJob) {
	for {
		c, err := j.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if j.pid == 0 {
			f.pid++
			j.pid = f.pid
		}
		pid := j.pid
		f.mu.Unlock()
		fmt.Fprintf(c, "ok %d\n", pid)
		c.Close()
	}
}

func (f *fakeLaunchctl) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		j.ln.Close()
	}
}

// plistString is the first <string> after <key>key</key> in a plist.
func plistString(plist, key string) string {
	_, rest, _ := strings.Cut(plist, "<key>"+key+"</key>")
	_, rest, _ = strings.Cut(rest, "<string>")
	v, _, _ := strings.Cut(rest, "</string>")
	return v
}
