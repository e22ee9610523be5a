package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackagedUnitsAreUsedAndNeverCopied: where a package installed
// mcpx@.socket and mcpx@.service for this mcpxd (what the .deb puts in
// /usr/lib/systemd/user; here the hermetic manager's package directory),
// commands activate the daemon through them and write no units of their
// own into ~/.config/systemd/user; install and uninstall say whose they are
// and leave them in place.
func TestPackagedUnitsAreUsedAndNeverCopied(t *testing.T) {
	e, m := newSystemdEnv(t)
	gen := exec.Command("go", "run", "./units/unitgen", "-bin", mcpxdBin, "-out", m.PackageUnitDir())
	gen.Dir = repoRoot
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("units/unitgen: %v\n%s", err, out)
	}
	own := []string{filepath.Join(m.UnitDir(), "mcpx@.socket"), filepath.Join(m.UnitDir(), "mcpx@.service")}
	noOwnUnits := func(after string) {
		t.Helper()
		for _, f := range own {
			if _, err := os.Stat(f); err == nil {
				t.Fatalf("%s wrote %s beside the packaged units", after, f)
			}
		}
	}

	r := e.MustOK("call", "demo.echo", "text=hi")
	if r.Stdout != "hi" || strings.Contains(r.Stderr, "systemd user units") {
		t.Fatalf("first call with packaged units:\n%s", r)
	}
	noOwnUnits("the first call")
	svc := m.Show(t, "mcpx@builtin.service", "ActiveState", "FragmentPath", "TriggeredBy")
	if svc["ActiveState"] != "active" || svc["FragmentPath"] != filepath.Join(m.PackageUnitDir(), "mcpx@.service") ||
		!strings.Contains(svc["TriggeredBy"], "mcpx@builtin.socket") {
		t.Fatalf("service after the first call: %v", svc)
	}

	r = e.MustOK("install")
	if !strings.Contains(r.Stdout, "installed by a package") || !strings.Contains(r.Stdout, m.PackageUnitDir()) ||
		strings.Contains(r.Stdout, "removed") {
		t.Fatalf("install with packaged units:\n%s", r)
	}
	noOwnUnits("install")

	// A copy an earlier mcpx wrote (before the package was installed)
	// would hide the package's units: install removes it, and says so.
	copyOf := func(name string) {
		b, err := os.ReadFile(filepath.Join(m.PackageUnitDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		own := strings.Replace(string(b), "# Installed by the mcpx", "# Written by mcpx (a copy); was the mcpx", 1)
		if err := os.MkdirAll(m.UnitDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(m.UnitDir(), name), []byte(own), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyOf("mcpx@.socket")
	copyOf("mcpx@.service")
	r = e.MustOK("install")
	if strings.Count(r.Stdout, "removed ") != 2 || !strings.Contains(r.Stdout, "installed by a package") {
		t.Fatalf("install with copies hiding the packaged units:\n%s", r)
	}
	noOwnUnits("install with copies")

	var st statusDoc
	e.JSON(&st, "status")
	if st.Manager != "systemd" || st.Service.State != "running" {
		t.Fatalf("status with packaged units: %+v", st)
	}

	r = e.MustOK("uninstall")
	if !strings.Contains(r.Stdout, "belong to a package") {
		t.Fatalf("uninstall with packaged units:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(m.PackageUnitDir(), "mcpx@.service")); err != nil {
		t.Fatalf("uninstall removed the package's unit: %v", err)
	}
	if got := m.Show(t, "mcpx@builtin.service", "ActiveState")["ActiveState"]; got != "inactive" {
		t.Fatalf("uninstall left the daemon %s", got)
	}
	if r := e.MustOK("call", "demo.echo", "text=again"); r.Stdout != "again" {
		t.Fatalf("call after uninstall:\n%s", r)
	}
	noOwnUnits("a call after uninstall")
}
