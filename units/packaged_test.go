package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/systemdtest"
)

func TestSearchDirsFromTheEnvironment(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	got := searchDirs(env(map[string]string{"HOME": "/home/u"}))
	want := []string{"/etc/xdg/systemd/user", "/etc/systemd/user", "/run/systemd/user", "/home/u/.local/share/systemd/user",
		"/usr/local/share/systemd/user", "/usr/share/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user"}
	if !slices.Equal(got, want) {
		t.Errorf("searchDirs with only HOME:\n got %v\nwant %v", got, want)
	}
	got = searchDirs(env(map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/d", "XDG_RUNTIME_DIR": "/run/user/7",
		"XDG_DATA_DIRS": "relative:/opt/share", "XDG_CONFIG_DIRS": "/cfg"}))
	want = []string{"/cfg/systemd/user", "/etc/systemd/user", "/run/user/7/systemd/user", "/run/systemd/user", "/d/systemd/user",
		"/opt/share/systemd/user", "/usr/local/lib/systemd/user", "/usr/local/share/systemd/user", "/usr/lib/systemd/user", "/usr/share/systemd/user"}
	if !slices.Equal(got, want) {
		t.Errorf("searchDirs with XDG variables:\n got %v\nwant %v", got, want)
	}
}

// TestSearchDirsAreTheManagers: the directories mcpx looks in for a
// package's units are the real manager's, in its order, after UnitDir.
func TestSearchDirsAreTheManagers(t *testing.T) {
	m := systemdtest.Start(t)
	out, err := m.Systemctl("show", "--value", "-p", "UnitPath")
	if err != nil {
		t.Fatal(err)
	}
	managers := strings.Fields(out)
	s := New(m.Getenv, "/usr/bin/mcpxd")
	at := slices.Index(managers, s.UnitDir)
	if at < 0 {
		t.Fatalf("the manager's UnitPath %v lacks UnitDir %s", managers, s.UnitDir)
	}
	if !slices.Contains(s.SearchDirs, m.PackageUnitDir()) {
		t.Fatalf("SearchDirs %v lack the instance's package directory %s", s.SearchDirs, m.PackageUnitDir())
	}
	for _, d := range s.SearchDirs {
		i := slices.Index(managers, d)
		if i < 0 {
			t.Errorf("the manager does not read %s (its UnitPath: %v)", d, managers)
			continue
		}
		if i <= at {
			t.Errorf("the manager reads %s before UnitDir (its UnitPath: %v)", d, managers)
		}
		at = i
	}
}

// installPackaged puts what the .deb installs (units/unitgen's output) for
// bin into the instance's package directory.
func installPackaged(t *testing.T, m *systemdtest.Manager, bin string) {
	t.Helper()
	sock, svc, err := (&Systemd{Bin: bin, ForPackage: true}).Render()
	if err != nil {
		t.Fatal(err)
	}
	dir := m.PackageUnitDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, SocketTemplate), sock, 0o644)
	os.WriteFile(filepath.Join(dir, ServiceTemplate), svc, 0o644)
}

func noFile(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists (%v)", p, err)
		}
	}
}

// TestPackagedUnitsAreUsed: with a package's templates for the same mcpxd
// in the manager's search path, mcpx writes nothing into UnitDir, removes
// the copies it wrote there before, and the socket activates the service
// the package's units describe.
func TestPackagedUnitsAreUsed(t *testing.T) {
	m := systemdtest.Start(t)
	bin := systemdtest.FakeDaemonAt(t, filepath.Join(m.Dir, "usr", "bin", "mcpxd"))
	installPackaged(t, m, bin)
	s := New(m.Getenv, bin)
	defer s.Close()
	ctx := context.Background()

	if ok, got, err := s.Installed(); !ok || got != bin || err != nil {
		t.Fatalf("Installed with packaged units = %v, %q, %v; want true, %q", ok, got, err, bin)
	}
	if cur, err := s.Current(); !cur || err != nil {
		t.Fatalf("Current with packaged units = %v, %v", cur, err)
	}
	if s.Where() != m.PackageUnitDir() {
		t.Fatalf("Where = %s, want %s", s.Where(), m.PackageUnitDir())
	}
	if err := s.Install(ctx); err != nil {
		t.Fatal(err)
	}
	noFile(t, s.SocketPath(), s.ServicePath())

	key := "pkg"
	if err := s.Ensure(ctx, key); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(m.RuntimeDir(), "mcpx", key+".sock")
	answer := systemdtest.AskFake(t, sock)
	ks := waitState(t, s, key, func(ks KeyState) bool { return ks.Service.ActiveState == "active" })
	if want := "ok " + itoa(ks.Service.MainPID); answer != want {
		t.Fatalf("daemon answered %q, want %q", answer, want)
	}
	want := filepath.Join(m.PackageUnitDir(), ServiceTemplate)
	if got := m.Show(t, ServiceUnit(key), "FragmentPath")["FragmentPath"]; got != want {
		t.Fatalf("the service was loaded from %s, want %s", got, want)
	}

	// Copies an earlier mcpx wrote would hide the package's units: they
	// are stale, and Install removes them.
	if _, err := s.writeUnits(); err != nil {
		t.Fatal(err)
	}
	if cur, err := s.Current(); cur || err != nil {
		t.Fatalf("Current with mcpx's own copies hiding the packaged units = %v, %v", cur, err)
	}
	if ok, got, _ := s.Installed(); !ok || got != bin {
		t.Fatalf("Installed with copies = %v, %q", ok, got)
	}
	if err := s.Install(ctx); err != nil {
		t.Fatal(err)
	}
	noFile(t, s.SocketPath(), s.ServicePath())
	if cur, err := s.Current(); !cur || err != nil {
		t.Fatalf("Current after Install removed the copies = %v, %v", cur, err)
	}
	if got := m.Show(t, ServiceUnit(key), "FragmentPath")["FragmentPath"]; got != want {
		t.Fatalf("after removing the copies the service is loaded from %s, want %s", got, want)
	}

	// A unit the user wrote (no mcpx header) is theirs: it stays.
	mine := "[Unit]\nDescription=my own mcpx socket\n[Socket]\nListenStream=%t/mcpx/%i.sock\n"
	if err := os.MkdirAll(s.UnitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.SocketPath(), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Install(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(s.SocketPath()); err != nil || string(b) != mine {
		t.Fatalf("Install touched the user's own unit: %v\n%s", err, b)
	}
	if cur, _ := s.Current(); !cur {
		t.Fatal("Current is false for a unit the user wrote, so every command would try to install again")
	}
	os.Remove(s.SocketPath())

	// Another mcpxd (say a `go install`ed one) gets units of its own when
	// asked (`mcpx install`); they come first, and Uninstall leaves the
	// package's alone.
	other := systemdtest.FakeDaemonAt(t, filepath.Join(m.Dir, "home", "go", "bin", "mcpxd"))
	o := New(m.Getenv, other)
	defer o.Close()
	if ok, got, _ := o.Installed(); !ok || got != bin {
		t.Fatalf("Installed for another binary = %v, %q; want the package's %s", ok, got, bin)
	}
	if err := o.Install(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, got, _ := o.Installed(); !ok || got != other || o.Where() != o.UnitDir {
		t.Fatalf("after Install for %s: Installed = %v, %q; Where = %s", other, ok, got, o.Where())
	}
	if err := o.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	noFile(t, o.SocketPath(), o.ServicePath())
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("Uninstall removed the package's unit: %v", err)
	}
	if ok, got, _ := s.Installed(); !ok || got != bin {
		t.Fatalf("after Uninstall: Installed = %v, %q; want the package's %s", ok, got, bin)
	}
}
