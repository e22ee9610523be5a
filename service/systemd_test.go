package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/systemdtest"
	"github.com/mcpx-dev/mcpx/units"
)

// hermetic returns a getenv for a hermetic systemd plus extra variables,
// and the paths it implies.
func hermetic(t *testing.T, m *systemdtest.Manager, extra map[string]string) (config.Getenv, config.Paths) {
	getenv := func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		return m.Getenv(k)
	}
	paths, err := config.DefaultPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	return getenv, paths
}

func TestDetectChoosesAndInstallsOnce(t *testing.T) {
	m := systemdtest.Start(t)
	self := m.FakeDaemon(t)
	ctx := context.Background()
	for _, mode := range []string{"", "auto", "systemd"} {
		getenv, paths := hermetic(t, m, map[string]string{"MCPX_SERVICE": mode})
		mgr, note, err := Detect(ctx, getenv, paths, self)
		if err != nil || mgr.Name() != NameSystemd {
			t.Fatalf("MCPX_SERVICE=%q: %v, %v", mode, mgr, err)
		}
		first := mode == ""
		if first != strings.Contains(note, "installed systemd user units mcpx@.socket and mcpx@.service in "+m.UnitDir()) {
			t.Fatalf("MCPX_SERVICE=%q: note %q (first use: %v)", mode, note, first)
		}
		if !first && note != "" {
			t.Fatalf("MCPX_SERVICE=%q: unexpected note %q", mode, note)
		}
	}
	if out, err := m.Systemctl("cat", "mcpx@k.service"); err != nil || !strings.Contains(out, self) {
		t.Fatalf("installed service: %v\n%s", err, out)
	}

	getenv, paths := hermetic(t, m, map[string]string{"MCPX_SERVICE": "direct"})
	if mgr, _, err := Detect(ctx, getenv, paths, self); err != nil || mgr.Name() != NameDirect {
		t.Fatalf("MCPX_SERVICE=direct: %v, %v", mgr, err)
	}
	getenv, paths = hermetic(t, m, map[string]string{"MCPX_SERVICE": "upstart"})
	if _, _, err := Detect(ctx, getenv, paths, self); !errors.Is(err, ErrUnknownService) || !strings.Contains(err.Error(), "upstart") {
		t.Fatalf("MCPX_SERVICE=upstart: %v", err)
	}

	// A go-run binary is never written into a unit.
	getenv, paths = hermetic(t, m, nil)
	tmpBin := filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "mcpx")
	mgr, note, err := Detect(ctx, getenv, paths, tmpBin)
	if err != nil || mgr.Name() != NameDirect || !strings.Contains(note, "temporary build directory") {
		t.Fatalf("go run binary: %v, %q, %v", mgr, note, err)
	}
	if _, bin, _ := newSystemd(getenv, paths, self).Units.Installed(); bin != self {
		t.Fatalf("units now run %q, want %q", bin, self)
	}

	// Units that run a binary that is gone are rewritten for self.
	other := filepath.Join(m.Dir, "old", "mcpx")
	old := newSystemd(getenv, paths, other)
	if err := old.Units.Install(ctx); err != nil {
		t.Fatal(err)
	}
	mgr, note, err = Detect(ctx, getenv, paths, self)
	if err != nil || mgr.Name() != NameSystemd || !strings.Contains(note, other) {
		t.Fatalf("after the binary vanished: %v, %q, %v", mgr, note, err)
	}
	// Units of another, existing binary are left alone and reported.
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := old.Units.Install(ctx); err != nil {
		t.Fatal(err)
	}
	mgr, note, err = Detect(ctx, getenv, paths, self)
	if err != nil || note != "" {
		t.Fatalf("with another binary installed: %q, %v", note, err)
	}
	st, err := mgr.State(ctx, "k")
	if err != nil || st.Detail["installedBinary"] != other {
		t.Fatalf("State detail %v, %v; want installedBinary %s", st.Detail, err, other)
	}
}

func TestDetectWithoutSystemd(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "XDG_RUNTIME_DIR": filepath.Join(dir, "run"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	getenv := func(k string) string { return env[k] }
	paths, err := config.DefaultPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	env["MCPX_SERVICE"] = "systemd"
	if _, _, err := Detect(context.Background(), getenv, paths, "/usr/bin/mcpx"); !errors.Is(err, ErrNoServiceManager) || !errors.Is(err, units.ErrUnavailable) {
		t.Fatalf("MCPX_SERVICE=systemd without a manager: %v", err)
	}
	env["MCPX_SERVICE"] = "auto"
	m, _, err := Detect(context.Background(), getenv, paths, "/usr/bin/mcpx")
	if err != nil || m.Name() != NameDirect {
		t.Fatalf("auto without a manager: %v, %v", m, err)
	}
}

// waitFor polls State until ok accepts it (bounded, never timed).
func waitFor(t *testing.T, mgr Manager, key config.DaemonKey, ok func(State) bool) State {
	t.Helper()
	var st State
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if st, err = mgr.State(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
	}
	t.Fatalf("state of %s never matched; last %+v", key, st)
	return st
}

// TestSystemdStates holds the adapter's State mapping against a real user
// manager: not installed, socket only, running, failed.
func TestSystemdStates(t *testing.T) {
	m := systemdtest.Start(t)
	self := m.FakeDaemon(t)
	getenv, paths := hermetic(t, m, nil)
	ctx := context.Background()
	mgr := NewSystemd(getenv, paths, self)

	if ok, err := mgr.Installed(); ok || err != nil {
		t.Fatalf("Installed before Install = %v, %v", ok, err)
	}
	st, err := mgr.State(ctx, "k1")
	if err != nil || st.Service != ServiceNotInstalled || st.Socket != SocketAbsent || st.Manager != NameSystemd || st.Key != "k1" {
		t.Fatalf("not installed: %+v, %v", st, err)
	}
	if err := mgr.Install(); err != nil {
		t.Fatal(err)
	}
	if st, _ = mgr.State(ctx, "k1"); st.Service != ServiceIdle || st.Socket != SocketAbsent {
		t.Fatalf("installed, nothing started: %+v", st)
	}

	if err := mgr.Ensure(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	st, _ = mgr.State(ctx, "k1")
	if st.Socket != SocketListening || st.Service != ServiceIdle || st.PID != 0 {
		t.Fatalf("socket only: %+v", st)
	}
	if got := m.Show(t, "mcpx@k1.service", "ActiveState")["ActiveState"]; got != "inactive" {
		t.Fatalf("Ensure or State started the service: %s", got)
	}
	if st.Units[0] != "mcpx@k1.socket" || st.Units[1] != "mcpx@k1.service" {
		t.Fatalf("units %v", st.Units)
	}

	answer := systemdtest.AskFake(t, paths.Socket("k1"))
	st = waitFor(t, mgr, "k1", func(st State) bool { return st.Detail["serviceActiveState"] == "active" })
	if st.Service != ServiceRunning || st.PID == 0 || st.Since.IsZero() || answer != "ok "+strconv.Itoa(st.PID) {
		t.Fatalf("running: %+v (daemon said %q)", st, answer)
	}

	if err := mgr.Ensure(ctx, "fail1"); err != nil {
		t.Fatal(err)
	}
	systemdtest.AskFake(t, paths.Socket("fail1"))
	st = waitFor(t, mgr, "fail1", func(st State) bool { return st.Service == ServiceFailed && st.Socket == SocketListening })
	if st.LastExit != "exit-code 1" || st.PID != 0 {
		t.Fatalf("failed: %+v", st)
	}

	all, err := mgr.List(ctx)
	if err != nil || len(all) != 2 || all[0].Key != "fail1" || all[1].Key != "k1" || all[1].Service != ServiceRunning {
		t.Fatalf("List = %+v, %v", all, err)
	}

	if err := mgr.Stop(ctx, "k1", false); err != nil {
		t.Fatal(err)
	}
	if st, _ = mgr.State(ctx, "k1"); st.Service != ServiceIdle || st.Socket != SocketListening {
		t.Fatalf("after Stop(service): %+v", st)
	}
	if err := mgr.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if st, _ = mgr.State(ctx, "k1"); st.Service != ServiceNotInstalled || st.Socket != SocketAbsent {
		t.Fatalf("after Uninstall: %+v", st)
	}
}

// status connects only to a daemon that is up and staying up: a service
// still deactivating would be started again by a queued connection.
func TestServingOnlyWhenActive(t *testing.T) {
	s := &Systemd{Units: units.New(func(string) string { return "" }, "/usr/bin/mcpx")}
	for active, want := range map[string]bool{"active": true, "activating": false, "deactivating": false, "reloading": false, "inactive": false, "failed": false} {
		st := s.fromUnits(units.KeyState{Key: "k",
			Socket:  units.UnitState{Name: "mcpx@k.socket", LoadState: "loaded", ActiveState: "active"},
			Service: units.UnitState{Name: "mcpx@k.service", LoadState: "loaded", ActiveState: active}})
		if got := st.Serving(); got != want {
			t.Errorf("service %s: Serving() = %v, want %v", active, got, want)
		}
	}
	if !(State{Service: ServiceRunning}).Serving() {
		t.Error("a running direct daemon is serving")
	}
	if (State{Service: ServiceStale}).Serving() {
		t.Error("a stale direct daemon is not serving")
	}
}

// A runtime directory so deep that socket paths move to a short fallback
// directory cannot be served by the socket unit (%t/mcpx/<key>.sock): even
// with MCPX_SERVICE=systemd and a manager answering, mcpx must use direct.
func TestDetectFallsBackWhenSocketPathsLeaveTheRuntimeDir(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, strings.Repeat("d", 90))
	env := map[string]string{"HOME": dir, "XDG_RUNTIME_DIR": deep, "MCPX_SERVICE": "systemd"}
	getenv := func(k string) string { return env[k] }
	paths, err := config.DefaultPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(paths.Sockets) }) // the short directory, made in /tmp
	if filepath.Dir(paths.Socket("0123456789ab")) == paths.Runtime {
		t.Fatalf("test setup: %s is not long enough to move the socket", paths.Runtime)
	}
	m, note, err := Choose(context.Background(), getenv, paths, "/usr/bin/mcpx")
	if err != nil || m.Name() != NameDirect || !strings.Contains(note, "too long") {
		t.Fatalf("Choose with a deep runtime dir: %v, %q, %v", m, note, err)
	}
}

// A client without XDG_RUNTIME_DIR keeps its sockets outside the manager's
// %t: even when a bus address reaches the user manager, the socket units
// cannot serve it, so auto means direct and MCPX_SERVICE=systemd says why.
func TestDetectNeedsTheManagersRuntimeDir(t *testing.T) {
	m := systemdtest.Start(t)
	if m.BusSocket() == "" {
		t.Skip("no user bus in this systemd (dbus-user-session not installed)")
	}
	tmp := t.TempDir()
	for _, mode := range []string{"auto", "systemd"} {
		getenv, paths := hermetic(t, m, map[string]string{"MCPX_SERVICE": mode, "XDG_RUNTIME_DIR": "", "TMPDIR": tmp,
			"DBUS_SESSION_BUS_ADDRESS": "unix:path=" + m.BusSocket()})
		mgr, _, err := Choose(context.Background(), getenv, paths, m.FakeDaemon(t))
		switch mode {
		case "auto":
			if err != nil || mgr.Name() != NameDirect {
				t.Fatalf("auto without XDG_RUNTIME_DIR: %v, %v; want direct", mgr, err)
			}
		case "systemd":
			if !errors.Is(err, ErrNoServiceManager) || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
				t.Fatalf("systemd without XDG_RUNTIME_DIR: %v", err)
			}
		}
	}
}
