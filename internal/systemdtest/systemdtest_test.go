package systemdtest

import (
	"strings"
	"testing"
)

func TestStartIsHermeticAndIndependent(t *testing.T) {
	a := Start(t)
	b := Start(t)
	if a.RuntimeDir() == b.RuntimeDir() {
		t.Fatalf("two instances share %s", a.RuntimeDir())
	}
	for _, m := range []*Manager{a, b} {
		got, err := m.Systemctl("show-environment")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "XDG_RUNTIME_DIR="+m.RuntimeDir()) {
			t.Errorf("manager environment %q lacks its own XDG_RUNTIME_DIR %s", got, m.RuntimeDir())
		}
		if m.Getenv("HOME") != m.Home() {
			t.Errorf("Getenv(HOME) = %q, want %q", m.Getenv("HOME"), m.Home())
		}
	}
	// A unit written to one instance's unit directory is seen by that
	// instance only.
	if out, err := a.Systemctl("show", "-p", "UnitPath"); err != nil || !strings.Contains(out, a.UnitDir()) {
		t.Fatalf("UnitPath of a = %q (%v), want it to contain %s", out, err, a.UnitDir())
	}
	if out, _ := b.Systemctl("show", "-p", "UnitPath"); strings.Contains(out, a.UnitDir()) {
		t.Fatalf("instance b reads a's units: %q", out)
	}
}
