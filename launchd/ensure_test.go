package launchd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeLaunchd plays launchd for one agent the way Ensure relies on it:
// bootstrap reads the plist and listens on its socket path (failing,
// like launchd, when the socket's directory is missing), bootout closes
// the socket and unloads the job, print describes the job. Calls are
// recorded by verb.
type fakeLaunchd struct {
	t        *testing.T
	a        *Agents
	key      string
	loaded   bool
	program  string // what the loaded job runs
	ln       net.Listener
	calls    []string
	refuse   int    // exit code of every bootstrap, when not 0
	disabled string // print-disabled output
	// lingering makes bootout answer 36 and the job stay loaded for that
	// many more prints.
	lingering int
}

func newFake(t *testing.T) (*fakeLaunchd, *Agents, string, string) {
	t.Helper()
	root, err := os.MkdirTemp("", "ld")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	bin := filepath.Join(root, "bin", "mcpxd")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(root, "home")}
	a := New(func(k string) string { return env[k] }, bin)
	a.Domain = "gui/501"
	f := &fakeLaunchd{t: t, a: a, key: "0a1b2c3d4e5f"}
	a.Launchctl = f.run
	a.Wait = func(context.Context, time.Duration) {}
	t.Cleanup(func() {
		if f.ln != nil {
			f.ln.Close()
		}
	})
	return f, a, filepath.Join(root, "T", "mcpx-501", f.key+".sock"), filepath.Join(root, "state", f.key+".log")
}

func (f *fakeLaunchd) run(_ context.Context, args ...string) ([]byte, []byte, int, error) {
	f.calls = append(f.calls, args[0])
	target := f.a.Domain + "/" + Label(f.key)
	switch {
	case args[0] == "print" && args[1] == target:
		if f.lingering > 0 {
			f.lingering--
			if f.lingering == 0 {
				f.unload()
			}
		}
		if !f.loaded {
			return nil, []byte(`Could not find service "` + Label(f.key) + `" in domain for port`), 113, nil
		}
		return []byte(fmt.Sprintf("%s = {\n\tstate = not running\n\tprogram = %s\n\tsockets = {\n\t\tmcpx = {\n\t\t\ttype = stream\n\t\t}\n\t}\n}\n", target, f.program)), nil, 0, nil
	case args[0] == "print-disabled":
		return []byte(f.disabled), nil, 0, nil
	case args[0] == "bootstrap" && len(args) == 3 && args[1] == f.a.Domain && args[2] == f.a.PlistPath(f.key):
		if f.loaded {
			return nil, []byte("Bootstrap failed: 5: Input/output error"), 5, nil
		}
		if f.refuse != 0 {
			return nil, []byte(fmt.Sprintf("Bootstrap failed: %d: Input/output error", f.refuse)), f.refuse, nil
		}
		prog, err := programOf(mustOpen(f.t, args[2]))
		if err != nil {
			f.t.Fatal(err)
		}
		sock := sockPathOf(f.t, args[2])
		os.Remove(sock)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			// launchd loads the job anyway and logs the failed bind.
			f.t.Logf("fake launchd: cannot listen on %s: %v", sock, err)
		} else {
			f.ln = ln
		}
		f.loaded, f.program = true, prog
		return nil, nil, 0, nil
	case args[0] == "bootout" && args[1] == target:
		if !f.loaded {
			return nil, []byte("Boot-out failed: 3: No such process"), 3, nil
		}
		if f.lingering > 0 {
			return nil, []byte("Boot-out failed: 36: Operation now in progress"), 36, nil
		}
		f.unload()
		return nil, nil, 0, nil
	}
	f.t.Errorf("unexpected launchctl %v", args)
	return nil, nil, 1, nil
}

func (f *fakeLaunchd) unload() {
	if f.ln != nil {
		f.ln.Close()
		f.ln = nil
	}
	f.loaded = false
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	return fh
}

// sockPathOf reads SockPathName from a plist written by Render.
func sockPathOf(t *testing.T, plist string) string {
	b, err := os.ReadFile(plist)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<key>SockPathName</key>")
	if !ok {
		t.Fatalf("no SockPathName in %s", plist)
	}
	_, rest, _ = strings.Cut(rest, "<string>")
	v, _, _ := strings.Cut(rest, "</string>")
	return v
}

// ensure runs Ensure and returns the launchctl verbs it used.
func (f *fakeLaunchd) ensure(t *testing.T, socket, log string) []string {
	t.Helper()
	f.calls = nil
	if err := f.a.Ensure(context.Background(), f.key, socket, log); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return f.calls
}

func dialable(t *testing.T, socket string) {
	t.Helper()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("socket %s after Ensure: %v", socket, err)
	}
	c.Close()
}

func TestEnsureLoadsAndThenLeavesAlone(t *testing.T) {
	f, _, socket, log := newFake(t)
	if calls := f.ensure(t, socket, log); !slices.Equal(calls, []string{"print", "bootstrap"}) {
		t.Fatalf("first Ensure: %v, want print, bootstrap", calls)
	}
	dialable(t, socket)
	// A healthy agent costs one print and one connection.
	if calls := f.ensure(t, socket, log); !slices.Equal(calls, []string{"print"}) {
		t.Fatalf("second Ensure: %v, want print only", calls)
	}
}

// D2: a reboot or a temp cleaner removes the socket (or its directory)
// under an agent launchd keeps loaded; Ensure reloads it.
func TestEnsureRepairsAGoneSocket(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(socket string) error
	}{
		{"socket file", os.Remove},
		{"socket directory", func(s string) error { return os.RemoveAll(filepath.Dir(s)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, socket, log := newFake(t)
			f.ensure(t, socket, log)
			if err := tc.remove(socket); err != nil {
				t.Fatal(err)
			}
			if calls := f.ensure(t, socket, log); !slices.Equal(calls, []string{"print", "bootout", "print", "bootstrap"}) {
				t.Fatalf("Ensure after the %s went: %v, want a reload", tc.name, calls)
			}
			dialable(t, socket)
		})
	}
}

// A socket file nobody listens on (launchd lost it) is repaired too.
func TestEnsureRepairsADeadSocket(t *testing.T) {
	f, a, socket, log := newFake(t)
	f.ensure(t, socket, log)
	a.Dial = func(context.Context, string) error { return errors.New("connection refused") }
	if calls := f.ensure(t, socket, log); !slices.Contains(calls, "bootout") || !slices.Contains(calls, "bootstrap") {
		t.Fatalf("Ensure with a dead socket: %v, want a reload", calls)
	}
}

// D3: an agent naming another program (a Homebrew upgrade deleted the
// Cellar path it named) or another environment is rewritten and reloaded;
// one that differs only in the version comment is not.
func TestEnsureRewritesAStaleAgent(t *testing.T) {
	f, a, socket, log := newFake(t)
	f.ensure(t, socket, log)
	plist := a.PlistPath(f.key)

	newBin := filepath.Join(filepath.Dir(a.Bin), "mcpxd-2")
	if err := os.WriteFile(newBin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	a.Bin = newBin
	if calls := f.ensure(t, socket, log); !slices.Equal(calls, []string{"print", "bootout", "print", "bootstrap"}) {
		t.Fatalf("Ensure for another binary: %v, want a reload", calls)
	}
	if got, _ := programOf(mustOpen(t, plist)); got != newBin || f.program != newBin {
		t.Fatalf("plist runs %q, launchd runs %q; want %s", got, f.program, newBin)
	}

	a.Env = map[string]string{"XDG_RUNTIME_DIR": "/Users/ada/.run"}
	if calls := f.ensure(t, socket, log); !slices.Contains(calls, "bootout") {
		t.Fatalf("Ensure for another environment: %v, want a reload", calls)
	}

	b, _ := os.ReadFile(plist)
	older := strings.Replace(string(b), "Written by mcpx ", "Written by mcpx 0.0.1-old; was ", 1)
	if older == string(b) {
		t.Fatal("the plist has no version comment")
	}
	if err := os.WriteFile(plist, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	if calls := f.ensure(t, socket, log); !slices.Equal(calls, []string{"print"}) {
		t.Fatalf("Ensure with only the comment changed: %v, want no reload", calls)
	}
}

// A loaded job that runs something else than its plist says (the plist
// was rewritten but never reloaded) is reloaded.
func TestEnsureReloadsAJobRunningAnotherProgram(t *testing.T) {
	f, _, socket, log := newFake(t)
	f.ensure(t, socket, log)
	f.program = "/usr/local/Cellar/mcpx/0.9.0/bin/mcpxd"
	if calls := f.ensure(t, socket, log); !slices.Contains(calls, "bootout") {
		t.Fatalf("Ensure: %v, want a reload", calls)
	}
}

// A bootout that goes on in the background (exit 36) is waited for.
func TestEnsureWaitsForALingeringBootout(t *testing.T) {
	f, a, socket, log := newFake(t)
	f.ensure(t, socket, log)
	a.Env = map[string]string{"XDG_RUNTIME_DIR": "/elsewhere"}
	f.lingering = 3
	calls := f.ensure(t, socket, log)
	if n := strings.Count(strings.Join(calls, " "), "print"); n < 3 || calls[len(calls)-1] != "bootstrap" {
		t.Fatalf("Ensure: %v, want polls until unloaded, then bootstrap", calls)
	}
}

func TestEnsureWithoutBinary(t *testing.T) {
	f, a, socket, log := newFake(t)
	os.Remove(a.Bin)
	err := a.Ensure(context.Background(), f.key, socket, log)
	if !errors.Is(err, ErrNoBinary) || len(f.calls) != 0 {
		t.Fatalf("Ensure = %v after %v; want ErrNoBinary before any launchctl", err, f.calls)
	}
}

// D9: launchd refusing the agent is explained.
func TestEnsureExplainsARefusal(t *testing.T) {
	f, a, socket, log := newFake(t)
	f.refuse = 5
	err := a.Ensure(context.Background(), f.key, socket, log)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "Login Items") || !strings.Contains(err.Error(), "MCPX_SERVICE=direct") {
		t.Fatalf("refused bootstrap: %v", err)
	}
	f.disabled = "disabled services = {\n\t\"com.apple.x\" => enabled\n\t\"" + Label(f.key) + "\" => disabled\n}\n"
	err = a.Ensure(context.Background(), f.key, socket, log)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "launchctl enable gui/501/"+Label(f.key)) {
		t.Fatalf("disabled agent: %v", err)
	}
	f.refuse, f.disabled = 17, ""
	if err = a.Ensure(context.Background(), f.key, socket, log); errors.Is(err, ErrRefused) || !errors.Is(err, ErrLaunchctl) {
		t.Fatalf("another failure: %v, want ErrLaunchctl only", err)
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		f    facts
		want action
	}{
		{facts{}, actLoad},
		{facts{Rewritten: true}, actLoad},
		{facts{Loaded: true, Bin: "/b"}, actNone},
		{facts{Loaded: true, Program: "/b", Bin: "/b"}, actNone},
		{facts{Loaded: true, Rewritten: true, Bin: "/b"}, actReload},
		{facts{Loaded: true, Program: "/a", Bin: "/b"}, actReload},
		{facts{Loaded: true, Bin: "/b", Socket: socketMissing}, actReload},
		{facts{Loaded: true, Bin: "/b", Socket: socketDirGone}, actReload},
		{facts{Loaded: true, Bin: "/b", Socket: socketNotSocket}, actReload},
		{facts{Loaded: true, Bin: "/b", Socket: socketRefused}, actReload},
	} {
		if got, why := plan(tc.f); got != tc.want || (got != actNone) != (why != "") {
			t.Errorf("plan(%+v) = %v, %q; want %v", tc.f, got, why, tc.want)
		}
	}
}

func TestDisabledIn(t *testing.T) {
	out := []byte("disabled services = {\n\t\"dev.mcpx.a\" => disabled\n\t\"dev.mcpx.b\" => enabled\n\t\"dev.mcpx.c\" => true\n\t\"dev.mcpx.d\" => false\n}\n")
	for label, want := range map[string]bool{"dev.mcpx.a": true, "dev.mcpx.b": false, "dev.mcpx.c": true, "dev.mcpx.d": false, "dev.mcpx.e": false} {
		if got := disabledIn(out, label); got != want {
			t.Errorf("disabledIn(%s) = %v", label, got)
		}
	}
}
