// Package systemdtest starts a hermetic systemd user manager for tests.
//
// As root on a machine without a booted systemd, one can run a real user
// manager with its own HOME and XDG_RUNTIME_DIR:
//
//	mkdir -p /run/systemd/system        # systemd refuses to run otherwise
//	T=$(mktemp -d); mkdir -p $T/home; mkdir -m 0700 $T/run
//	env -i PATH=$PATH HOME=$T/home XDG_RUNTIME_DIR=$T/run \
//	    XDG_CONFIG_HOME=$T/home/.config setsid /lib/systemd/systemd --user &
//	HOME=$T/home XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/home/.config systemctl --user is-system-running
//	... systemctl --user exit
//
// With the same variables, `systemctl --user`, the user bus ($T/run/bus, when
// dbus-user-session's dbus.socket is installed) and systemd's private socket
// ($T/run/systemd/private) reach that instance, and user units are read from
// $XDG_CONFIG_HOME/systemd/user. Instances do not share anything, so every
// test package can start its own.
package systemdtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// Manager is one running hermetic systemd user manager.
type Manager struct {
	// Dir is the instance's root; HOME is Dir/home, XDG_RUNTIME_DIR Dir/run.
	Dir    string
	cmd    *exec.Cmd
	exited chan error
	log    *testkit.SyncBuffer
}

// Binary returns the systemd binary's path, or "" when there is none.
func Binary() string {
	for _, p := range []string{"/lib/systemd/systemd", "/usr/lib/systemd/systemd"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Unavailable returns why a hermetic manager cannot run here, or "".
func Unavailable() string {
	if os.Geteuid() != 0 {
		return "a hermetic systemd user manager needs root (to create /run/systemd/system)"
	}
	if Binary() == "" {
		return "no systemd binary at /lib/systemd/systemd or /usr/lib/systemd/systemd"
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return "no systemctl in PATH"
	}
	return ""
}

// skip skips the test with reason, except under CI (CI=true) on Linux,
// where a skipped activation test would hide a broken machine: there it
// fails. (The macOS CI has no systemd to miss.)
func skip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" && runtime.GOOS == "linux" {
		t.Fatalf("systemdtest: %s (CI=true: activation tests must not be skipped)", reason)
	}
	t.Skip("systemdtest: " + reason)
}

// Start starts a hermetic user manager and stops it when the test ends.
// It skips the test (fails it under CI=true) when that is impossible, and
// skips it with -short.
func Start(t testing.TB) *Manager {
	t.Helper()
	if testing.Short() {
		// Asked for, not a broken machine: skipped even under CI=true.
		t.Skip("systemdtest: a systemd user manager per test is slow (-short)")
	}
	if why := Unavailable(); why != "" {
		skip(t, why)
	}
	if err := os.MkdirAll("/run/systemd/system", 0o755); err != nil {
		skip(t, fmt.Sprintf("create /run/systemd/system: %v", err))
	}
	// A short directory: socket paths under it must stay below 108 bytes.
	dir, err := os.MkdirTemp("", "sdt")
	if err != nil {
		t.Fatalf("systemdtest: %v", err)
	}
	m := &Manager{Dir: dir, log: new(testkit.SyncBuffer), exited: make(chan error, 1)}
	t.Cleanup(func() { m.stop(t) })
	if err := os.MkdirAll(m.UnitDir(), 0o755); err != nil {
		t.Fatalf("systemdtest: %v", err)
	}
	if err := os.Mkdir(m.RuntimeDir(), 0o700); err != nil {
		t.Fatalf("systemdtest: %v", err)
	}
	cmd := exec.Command(Binary(), "--user")
	cmd.Env = m.baseEnv()
	cmd.Stdout, cmd.Stderr = m.log, m.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("systemdtest: start %s --user: %v", Binary(), err)
	}
	m.cmd = cmd
	go func() { m.exited <- cmd.Wait() }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := m.Systemctl("is-system-running")
		if out == "running" || out == "degraded" {
			break
		}
		select {
		case err := <-m.exited:
			m.cmd = nil
			t.Fatalf("systemdtest: systemd --user exited (%v) before it was running; its output:\n%s", err, m.log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemdtest: systemd --user not running after 30s (is-system-running: %q); its output:\n%s", out, m.log)
		}
	}
	return m
}

// RuntimeDir is the instance's XDG_RUNTIME_DIR (%t in unit files).
func (m *Manager) RuntimeDir() string { return filepath.Join(m.Dir, "run") }

// Home is the instance's HOME.
func (m *Manager) Home() string { return filepath.Join(m.Dir, "home") }

// UnitDir is where the instance reads user units from.
func (m *Manager) UnitDir() string {
	return filepath.Join(m.Home(), ".config", "systemd", "user")
}

// PackageUnitDir is a directory the instance reads user units from below
// UnitDir, where a distribution's package puts them (the instance's
// $XDG_DATA_DIRS/systemd/user standing in for /usr/lib/systemd/user).
// It is not created.
func (m *Manager) PackageUnitDir() string {
	return filepath.Join(m.Dir, "share", "systemd", "user")
}

// baseEnv is what systemd itself runs with: nothing of the caller's
// environment leaks into the manager or its services.
func (m *Manager) baseEnv() []string {
	home := m.Home()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"HOME=" + home,
		"XDG_RUNTIME_DIR=" + m.RuntimeDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		// Instead of /usr/local/share:/usr/share: PackageUnitDir.
		"XDG_DATA_DIRS=" + filepath.Join(m.Dir, "share"),
	}
}

// Env is the environment a client of this instance needs: PATH, HOME, the
// XDG directories and, when the user bus socket exists,
// DBUS_SESSION_BUS_ADDRESS.
func (m *Manager) Env() []string {
	env := m.baseEnv()
	if bus := m.BusSocket(); bus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path="+bus)
	}
	return env
}

// Getenv looks a variable up in Env (config.Getenv-shaped).
func (m *Manager) Getenv(name string) string {
	prefix := name + "="
	for _, kv := range m.Env() {
		if strings.HasPrefix(kv, prefix) {
			return kv[len(prefix):]
		}
	}
	return ""
}

// BusSocket is the user bus socket, or "" when the instance has none
// (dbus-user-session not installed).
func (m *Manager) BusSocket() string {
	p := filepath.Join(m.RuntimeDir(), "bus")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return p
	}
	return ""
}

// Systemctl runs `systemctl --user ARGS...` against the instance and returns
// its trimmed combined output. The bound only ends a hung systemctl: a
// synchronous restart may legitimately take a unit's stop timeout plus its
// start timeout (30 s + 60 s for mcpx@.service) on a loaded machine.
func (m *Manager) Systemctl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "systemctl", append([]string{"--user", "--no-pager"}, args...)...)
	cmd.Env = m.Env()
	out, err := cmd.CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		return s, fmt.Errorf("systemctl --user %s: %w: %s", strings.Join(args, " "), err, s)
	}
	return s, nil
}

// Show returns properties of unit as `systemctl --user show` reports them.
// It fails the test when systemctl fails.
func (m *Manager) Show(t testing.TB, unit string, props ...string) map[string]string {
	t.Helper()
	args := []string{"show", unit}
	for _, p := range props {
		args = append(args, "-p", p)
	}
	out, err := m.Systemctl(args...)
	if err != nil {
		t.Fatalf("systemdtest: %v", err)
	}
	res := make(map[string]string)
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			res[k] = v
		}
	}
	return res
}

// Log is what the manager printed so far (useful in failure messages).
func (m *Manager) Log() string { return m.log.String() }

func (m *Manager) stop(t testing.TB) {
	if m.cmd != nil {
		pid := m.cmd.Process.Pid
		_, exitErr := m.Systemctl("exit")
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			// SIGTERM asks a user manager to exit too; then give up.
			t.Logf("systemdtest: systemd --user (pid %d) still running 10s after `systemctl --user exit` (%v); sending SIGTERM", pid, exitErr)
			_ = syscall.Kill(pid, syscall.SIGTERM)
			select {
			case <-m.exited:
			case <-time.After(10 * time.Second):
				t.Logf("systemdtest: killing the process group of systemd --user (pid %d); its output:\n%s", pid, m.Log())
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-m.exited
			}
		}
		// Anything left in the session (a service that escaped) goes too.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if err := os.RemoveAll(m.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("systemdtest: remove %s: %v", m.Dir, err)
	}
}

// FakeDaemon builds internal/systemdtest/fakedaemon as Dir/bin/mcpx: a
// stand-in for `mcpx daemon --key K` that takes the inherited socket named
// "mcpx", reports ready and answers "ok <pid>" (a key starting with "fail"
// answers once and exits 1).
func (m *Manager) FakeDaemon(t testing.TB) string {
	t.Helper()
	return FakeDaemonAt(t, filepath.Join(m.Dir, "bin", "mcpx"))
}

// FakeDaemonAt builds the fake daemon at path (so a test can choose a path
// with spaces or a '%' in it).
func FakeDaemonAt(t testing.TB, path string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", path, "github.com/mcpx-dev/mcpx/internal/systemdtest/fakedaemon")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("systemdtest: build fakedaemon: %v\n%s", err, out)
	}
	return path
}

// AskFake connects to a fake daemon's socket (activating it) and returns
// its one-line answer, "ok <pid>".
func AskFake(t testing.TB, path string) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read from %s: %v", path, err)
	}
	return strings.TrimSpace(line)
}
