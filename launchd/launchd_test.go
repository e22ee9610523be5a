package launchd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParsePrint(t *testing.T) {
	for _, tc := range []struct {
		file      string
		state     string
		pid, exit int
		signal    string
		running   bool
	}{
		{"print-running.txt", "running", 48213, -1, "", true},
		{"print-idle.txt", "not running", 0, 0, "", false},
		{"print-failed.txt", "not running", 0, 2, "", false},
		{"print-signal.txt", "not running", 0, -1, "Killed: 9", false},
		{"print-variant.txt", "spawn scheduled", 0, 78, "", false},
	} {
		st := ParsePrint(readTestdata(t, tc.file))
		if !st.Loaded || st.State != tc.state || st.PID != tc.pid || st.LastExitCode != tc.exit || st.LastSignal != tc.signal || st.Running() != tc.running {
			t.Errorf("%s: got %+v", tc.file, st)
		}
		if st.Program != "/opt/homebrew/bin/mcpxd" {
			t.Errorf("%s: program %q", tc.file, st.Program)
		}
		if len(st.SocketPaths) > 1 || len(st.SocketPaths) == 1 && filepath.Ext(st.SocketPaths[0]) != ".sock" {
			t.Errorf("%s: socket paths %q", tc.file, st.SocketPaths)
		}
		if !reflect.DeepEqual(st.Sockets, []string{"mcpx"}) {
			t.Errorf("%s: sockets %v, want [mcpx]", tc.file, st.Sockets)
		}
		// Nested blocks do not leak into the top-level fields.
		if _, ok := st.Fields["path"]; !ok || st.Fields["path"] == "" || filepath.Ext(st.Fields["path"]) != ".plist" {
			t.Errorf("%s: top-level path = %q", tc.file, st.Fields["path"])
		}
	}
	// Garbage is not a panic and claims nothing.
	st := ParsePrint([]byte("}}}\n{ = {\nstate\npid = x\n"))
	if st.PID != 0 || st.State != "" || len(st.Sockets) != 0 {
		t.Errorf("garbage: %+v", st)
	}
}

// replay answers launchctl invocations from recorded outputs.
func replay(t *testing.T, stdout, stderr string, code int) func(context.Context, ...string) ([]byte, []byte, int, error) {
	return func(_ context.Context, args ...string) ([]byte, []byte, int, error) {
		if len(args) != 2 || args[0] != "print" || args[1] != "gui/501/dev.mcpx.3fa2c81d09be" {
			t.Errorf("unexpected launchctl %v", args)
		}
		return []byte(stdout), []byte(stderr), code, nil
	}
}

func TestStateFromLaunchctl(t *testing.T) {
	a := &Agents{Domain: "gui/501"}
	a.Launchctl = replay(t, "", string(readTestdata(t, "print-unloaded.stderr")), 113)
	st, err := a.State(context.Background(), "3fa2c81d09be")
	if err != nil || st.Loaded || st.Label != "dev.mcpx.3fa2c81d09be" {
		t.Fatalf("unloaded: %+v, %v", st, err)
	}
	a.Launchctl = replay(t, string(readTestdata(t, "print-running.txt")), "", 0)
	if st, err = a.State(context.Background(), "3fa2c81d09be"); err != nil || !st.Running() || st.PID != 48213 {
		t.Fatalf("running: %+v, %v", st, err)
	}
	a.Launchctl = replay(t, "", "Operation not permitted", 1)
	if _, err = a.State(context.Background(), "3fa2c81d09be"); !errors.Is(err, ErrLaunchctl) {
		t.Fatalf("failing launchctl: %v, want ErrLaunchctl", err)
	}
	if _, err = a.State(context.Background(), "../x"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestRenderEscapesAndRoundTrips(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_RUNTIME_DIR": "/run/a&b", "TMPDIR": "/tmp/not-passed", "XDG_STATE_HOME": "/s"}
	bin := "/Applications/My <Tools> & Co/mcpx"
	a := New(func(k string) string { return env[k] }, bin)
	socket, log := "/run/a&b/mcpx/k1.sock", "/Users/ada/.local/state/mcpx/k1.log"
	changed, err := a.Write("k1", socket, log)
	if err != nil || !changed {
		t.Fatalf("Write = %v, %v", changed, err)
	}
	if changed, err = a.Write("k1", socket, log); err != nil || changed {
		t.Fatalf("second Write = %v, %v; want unchanged", changed, err)
	}
	ok, got, err := a.Installed("k1")
	if err != nil || !ok || got != bin {
		t.Fatalf("Installed = %v, %q, %v; want %q", ok, got, err, bin)
	}
	if keys, err := a.Keys(); err != nil || !reflect.DeepEqual(keys, []string{"k1"}) {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
	if ok, _, err := a.Installed("k2"); ok || err != nil {
		t.Fatalf("Installed(k2) = %v, %v", ok, err)
	}

	// A real plist parser reads what we wrote.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("no python3: plistlib check skipped")
		return
	}
	out, err := exec.Command(py, "-c", `import json,plistlib,sys; print(json.dumps(plistlib.load(open(sys.argv[1],"rb"))))`, a.PlistPath("k1")).Output()
	if err != nil {
		t.Fatalf("plistlib rejects the plist: %v", err)
	}
	var p struct {
		Label                string
		ProgramArguments     []string
		Sockets              map[string]map[string]any
		StandardErrorPath    string
		EnvironmentVariables map[string]string
		ProcessType          string
		ThrottleInterval     int
		ExitTimeOut          int
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.Label != "dev.mcpx.k1" || !reflect.DeepEqual(p.ProgramArguments, []string{bin, "daemon", "--key", "k1"}) ||
		p.Sockets["mcpx"]["SockPathName"] != socket || p.Sockets["mcpx"]["SockPathMode"] != float64(0o600) ||
		p.StandardErrorPath != log || !reflect.DeepEqual(p.EnvironmentVariables, map[string]string{"XDG_RUNTIME_DIR": "/run/a&b"}) ||
		p.ProcessType != "Interactive" || p.ThrottleInterval != ThrottleInterval || p.ExitTimeOut != ExitTimeout {
		t.Fatalf("plist reads back as %+v", p)
	}
}

func TestActivateSocketOutsideLaunchd(t *testing.T) {
	if _, err := ActivateSocket("mcpx"); !errors.Is(err, ErrNotActivated) {
		t.Fatalf("ActivateSocket outside launchd = %v, want ErrNotActivated", err)
	}
}
