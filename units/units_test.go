package units

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/systemdtest"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

func TestQuoteExecRoundTrip(t *testing.T) {
	for _, bin := range []string{"/usr/bin/mcpx", "/opt/my tools/mcpx", "/x/100%/mcpx", "/x/a$b/mcpx", "/x/a;b/mcpx"} {
		dir := t.TempDir()
		s := &Systemd{Bin: bin, UnitDir: dir}
		sock, svc, err := s.Render()
		if err != nil {
			t.Fatalf("Render(%q): %v", bin, err)
		}
		os.WriteFile(s.SocketPath(), sock, 0o644)
		os.WriteFile(s.ServicePath(), svc, 0o644)
		ok, got, err := s.Installed()
		if err != nil || !ok || got != bin {
			t.Errorf("Installed after rendering %q = %v, %q, %v", bin, ok, got, err)
		}
	}
	for _, bad := range []string{"mcpx", "./mcpx", `/x/a"b`, "/x/a'b", `/x/a\b`, "/x/a\nb"} {
		if _, err := QuoteExec(bad); !errors.Is(err, ErrBadBinary) {
			t.Errorf("QuoteExec(%q) = %v, want ErrBadBinary", bad, err)
		}
	}
}

func TestInstalledWithoutUnits(t *testing.T) {
	s := &Systemd{Bin: "/usr/bin/mcpx", UnitDir: t.TempDir()}
	ok, bin, err := s.Installed()
	if ok || bin != "" || err != nil {
		t.Fatalf("Installed on an empty dir = %v, %q, %v", ok, bin, err)
	}
	if cur, err := s.Current(); cur || err != nil {
		t.Fatalf("Current on an empty dir = %v, %v", cur, err)
	}
}

func TestUnavailableIsFastAndTyped(t *testing.T) {
	s := New(func(k string) string {
		return map[string]string{"HOME": t.TempDir(), "XDG_RUNTIME_DIR": t.TempDir()}[k]
	}, "/usr/bin/mcpx")
	if s.Available(context.Background()) {
		t.Fatal("Available with an empty runtime dir")
	}
	if err := s.Ensure(context.Background(), "abc"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ensure = %v, want ErrUnavailable", err)
	}
	if err := s.Ensure(context.Background(), "a/b"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("Ensure(a/b) = %v, want ErrBadKey", err)
	}
}

func TestRenderedUnitsPassVerify(t *testing.T) {
	m := systemdtest.Start(t)
	for _, bin := range []string{"mcpx", "with space/mcpx", "100%/mcpx"} {
		bin := systemdtest.FakeDaemonAt(t, filepath.Join(m.Dir, "bin", bin))
		s := &Systemd{Bin: bin}
		sock, svc, err := s.Render()
		if err != nil {
			t.Fatal(err)
		}
		// verify wants instances; a copy under an instance name is one.
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "mcpx@k1.socket"), sock, 0o644)
		os.WriteFile(filepath.Join(dir, "mcpx@k1.service"), svc, 0o644)
		cmd := exec.Command("systemd-analyze", "--user", "verify", "mcpx@k1.socket", "mcpx@k1.service")
		cmd.Dir, cmd.Env = dir, m.Env()
		out, err := cmd.CombinedOutput()
		// verify exits 0 on mere warnings; any output is a finding.
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze --user verify with ExecStart %q: %v\n%s\nservice:\n%s", bin, err, out, svc)
		}
	}
}

func TestInstallUninstallIdempotent(t *testing.T) {
	m := systemdtest.Start(t)
	bin := systemdtest.FakeDaemonAt(t, filepath.Join(m.Dir, "bin", "mcpx"))
	s := New(m.Getenv, bin)
	defer s.Close()
	ctx := context.Background()
	if s.UnitDir != m.UnitDir() {
		t.Fatalf("UnitDir = %s, want %s", s.UnitDir, m.UnitDir())
	}
	for i := 0; i < 2; i++ {
		if err := s.Install(ctx); err != nil {
			t.Fatalf("Install #%d: %v", i+1, err)
		}
	}
	if ok, got, err := s.Installed(); !ok || got != bin || err != nil {
		t.Fatalf("Installed = %v, %q, %v; want true, %q", ok, got, err, bin)
	}
	if cur, err := s.Current(); !cur || err != nil {
		t.Fatalf("Current = %v, %v", cur, err)
	}
	// The manager has loaded them (daemon-reload happened).
	if out, err := m.Systemctl("cat", "mcpx@x.socket"); err != nil || !strings.Contains(out, "ListenStream=%t/mcpx/%i.sock") {
		t.Fatalf("systemctl cat mcpx@x.socket: %v\n%s", err, out)
	}
	if got := m.Show(t, "mcpx@x.service", "ExecStart")["ExecStart"]; !strings.Contains(got, bin) {
		t.Fatalf("loaded ExecStart %q lacks %s", got, bin)
	}
	if err := s.Ensure(ctx, "inst"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Uninstall(ctx); err != nil {
			t.Fatalf("Uninstall #%d: %v", i+1, err)
		}
	}
	if ok, _, err := s.Installed(); ok || err != nil {
		t.Fatalf("Installed after Uninstall = %v, %v", ok, err)
	}
	if got := m.Show(t, "mcpx@inst.socket", "ActiveState", "LoadState"); got["ActiveState"] != "inactive" || got["LoadState"] != "not-found" {
		t.Fatalf("after Uninstall mcpx@inst.socket is %v, want inactive and not-found", got)
	}
	if _, err := os.Stat(filepath.Join(m.RuntimeDir(), "mcpx", "inst.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file after Uninstall: %v", err)
	}
}

// waitState polls State until ok accepts it (bounded; never timed).
func waitState(t *testing.T, s *Systemd, key string, ok func(KeyState) bool) KeyState {
	t.Helper()
	var ks KeyState
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if ks, err = s.State(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		if ok(ks) {
			return ks
		}
	}
	t.Fatalf("state of %s never matched; last: %+v", key, ks)
	return ks
}

func TestActivationLifecycle(t *testing.T) {
	m := systemdtest.Start(t)
	bin := systemdtest.FakeDaemonAt(t, filepath.Join(m.Dir, "bin", "mcpx"))
	transports := []string{ViaPrivate}
	if m.BusSocket() != "" {
		transports = append(transports, ViaBus)
	} else {
		t.Log("no user bus in this instance (dbus-user-session missing): testing the private socket only")
	}
	for _, via := range transports {
		t.Run(via, func(t *testing.T) {
			s := connectVia(t, m, bin, via)
			defer s.Close()
			if err := s.Install(context.Background()); err != nil {
				t.Fatal(err)
			}
			key := "run" + via
			// Before Ensure: loaded template, nothing active.
			if ks := mustState(t, s, key); ks.Socket.ActiveState != "inactive" || ks.Service.ActiveState != "inactive" || ks.Service.LoadState != "loaded" {
				t.Fatalf("state before Ensure: %+v", ks)
			}
			sock := checkEnsure(t, m, s, key)
			checkActivation(t, s, key, sock)
			checkStop(t, s, key, sock)
			checkFailedService(t, m, s, "fail"+via)
		})
	}
}

// connectVia returns the units manager reached through transport via.
func connectVia(t *testing.T, m *systemdtest.Manager, bin, via string) *Systemd {
	t.Helper()
	s := New(m.Getenv, bin)
	s.NoBus = via == ViaPrivate
	ctx := context.Background()
	if via == ViaBus {
		// The hermetic bus daemon is socket-activated and exits now and
		// then (see retry in manager.go); a dial while it restarts falls
		// back to the private socket. Wait until the bus itself answers.
		testkit.Eventually(t, 20*time.Second, "the user bus to answer", func() bool {
			s.Close()
			return s.Available(ctx) && s.Via() == ViaBus
		})
	}
	if !s.Available(ctx) {
		t.Fatal("manager not available")
	}
	if s.Via() != via {
		t.Fatalf("Via = %q, want %q", s.Via(), via)
	}
	return s
}

func mustState(t *testing.T, s *Systemd, key string) KeyState {
	t.Helper()
	ks, err := s.State(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// checkEnsure: Ensure (twice) leaves the socket listening, 0600 in a 0700
// directory, and the service untouched, also after State. It returns the
// socket's path.
func checkEnsure(t *testing.T, m *systemdtest.Manager, s *Systemd, key string) string {
	t.Helper()
	for i := range 2 {
		if err := s.Ensure(context.Background(), key); err != nil {
			t.Fatalf("Ensure #%d: %v", i+1, err)
		}
	}
	ks := mustState(t, s, key)
	if ks.Socket.ActiveState != "active" || ks.Socket.SubState != "listening" {
		t.Fatalf("socket after Ensure: %+v", ks.Socket)
	}
	if ks.Service.ActiveState != "inactive" || ks.Service.MainPID != 0 {
		t.Fatalf("service after Ensure: %+v", ks.Service)
	}
	if got := m.Show(t, ServiceUnit(key), "ActiveState")["ActiveState"]; got != "inactive" {
		t.Fatalf("State started the service: ActiveState=%s", got)
	}
	sock := filepath.Join(m.RuntimeDir(), "mcpx", key+".sock")
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v %v", sock, fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir: %v %v", fi, err)
	}
	return sock
}

// checkActivation: connecting starts the service, which State and List
// then show running with the pid that answered.
func checkActivation(t *testing.T, s *Systemd, key, sock string) {
	t.Helper()
	answer := systemdtest.AskFake(t, sock)
	ks := waitState(t, s, key, func(ks KeyState) bool { return ks.Service.ActiveState == "active" })
	if ks.Service.SubState != "running" || ks.Service.MainPID == 0 || ks.Service.Since.IsZero() {
		t.Fatalf("running service: %+v", ks.Service)
	}
	if want := "ok " + itoa(ks.Service.MainPID); answer != want {
		t.Fatalf("daemon answered %q, want %q", answer, want)
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(all, func(k KeyState) bool { return k.Key == key && k.Service.MainPID == ks.Service.MainPID }) {
		t.Fatalf("List lacks %s: %+v", key, all)
	}
}

// checkStop: stopping the service keeps the socket listening; stopping
// both removes the socket file (RemoveOnStop).
func checkStop(t *testing.T, s *Systemd, key, sock string) {
	t.Helper()
	ctx := context.Background()
	if err := s.Stop(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	if ks := mustState(t, s, key); ks.Service.ActiveState != "inactive" || ks.Socket.SubState != "listening" {
		t.Fatalf("after Stop(service): %+v", ks)
	}
	if err := s.Stop(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if ks := mustState(t, s, key); ks.Socket.ActiveState != "inactive" {
		t.Fatalf("after Stop(socket): %+v", ks.Socket)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file after stop: %v", err)
	}
}

// checkFailedService: a daemon that exits 1 leaves a failed service with
// its status, and the socket back to listening; Stop clears it.
func checkFailedService(t *testing.T, m *systemdtest.Manager, s *Systemd, key string) {
	t.Helper()
	ctx := context.Background()
	if err := s.Ensure(ctx, key); err != nil {
		t.Fatal(err)
	}
	systemdtest.AskFake(t, filepath.Join(m.RuntimeDir(), "mcpx", key+".sock"))
	// The socket goes back to listening once the manager has seen the
	// service fail.
	ks := waitState(t, s, key, func(ks KeyState) bool {
		return ks.Service.ActiveState == "failed" && ks.Socket.SubState == "listening"
	})
	if ks.Service.LastExit() != "exit-code 1" || ks.Service.Result != "exit-code" {
		t.Fatalf("failed service: LastExit %q, %+v", ks.Service.LastExit(), ks.Service)
	}
	if err := s.Stop(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if ks := mustState(t, s, key); ks.Service.ActiveState != "inactive" {
		t.Fatalf("Stop did not clear the failed state: %+v", ks.Service)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
