package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
	"github.com/mcpx-dev/mcpx/service"
)

// These tests run the command line in-process against a real daemon: the
// mcpx binary built from ./cmd/mcpx, started by the direct manager, serving
// the built-in demo server.

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func mcpxBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpx-cli-bin")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath, buildErr = testkit.BuildBinaries(dir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type env struct {
	t    *testing.T
	vars map[string]string
	bin  string
	dir  string
}

// newEnv makes a private HOME/XDG tree (short paths: sockets live there).
func newEnv(t *testing.T) *env {
	t.Helper()
	base, err := os.MkdirTemp("", "mcpxc")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, bin: mcpxBinary(t), dir: filepath.Join(base, "work"), vars: map[string]string{
		"HOME":            filepath.Join(base, "home"),
		"XDG_RUNTIME_DIR": filepath.Join(base, "run"),
		"XDG_STATE_HOME":  filepath.Join(base, "state"),
		"XDG_CACHE_HOME":  filepath.Join(base, "cache"),
		"XDG_CONFIG_HOME": filepath.Join(base, "config"),
		"PATH":            os.Getenv("PATH"),
	}}
	for _, d := range []string{e.dir, e.vars["HOME"]} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The spawned daemon inherits this process's environment.
	for k, v := range e.vars {
		t.Setenv(k, v)
	}
	t.Setenv("MCPX_SOCKET", "")
	t.Setenv("MCPX_CONFIG", "")
	t.Cleanup(func() {
		e.run("stop", "--all")
		os.RemoveAll(base)
	})
	return e
}

func (e *env) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	a := &App{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return e.vars[k] },
		Detect: func(_ context.Context, _ config.Getenv, paths config.Paths, _ string) (service.Manager, string, error) {
			return service.NewDirect(paths, filepath.Join(filepath.Dir(e.bin), "mcpxd")), "", nil
		},
	}
	code = a.Run(context.Background(), append([]string{"mcpx", "-C", e.dir}, args...))
	return code, out.String(), errb.String()
}

func TestCallDemoEchoThroughDirectDaemon(t *testing.T) {
	e := newEnv(t)
	code, out, errs := e.run("call", "demo.echo", "text=hello")
	if code != 0 || out != "hello" {
		t.Fatalf("call demo.echo: code %d, stdout %q, stderr %q", code, out, errs)
	}

	// key=value pairs are typed by the schema: add takes numbers.
	code, out, errs = e.run("call", "demo.add", "a=2", "b=40")
	if code != 0 || strings.TrimSpace(out) != "42" {
		t.Fatalf("call demo.add: code %d, stdout %q, stderr %q", code, out, errs)
	}

	code, out, errs = e.run("--json", "ls")
	if code != 0 {
		t.Fatalf("ls: code %d, stderr %q", code, errs)
	}
	var ns api.NamespacesResponse
	if err := json.Unmarshal([]byte(out), &ns); err != nil || len(ns.Namespaces) != 1 || ns.Namespaces[0].Name != "demo" {
		t.Fatalf("ls --json = %s (%v)", out, err)
	}

	code, out, errs = e.run("schema", "demo.add", "--format", "ts")
	if code != 0 || !strings.Contains(out, "export interface AddInput {") || !strings.Contains(out, "a: number;") {
		t.Fatalf("schema --format ts: code %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestCallExitCodes(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown tool suggests", []string{"call", "demo.ech", "text=x"}, ExitUsage, "did you mean demo.echo?"},
		{"non-object JSON", []string{"call", "demo.echo", "[1]"}, ExitUsage, "arguments must be a JSON object"},
		{"bad number", []string{"call", "demo.add", "a=x", "b=1"}, ExitUsage, "argument a"},
		{"destructive without terminal", []string{"call", "demo.delete_note", "name=x"}, ExitPolicy, "--yes"},
		{"bad flag", []string{"call", "--nope", "demo.echo"}, ExitUsage, "nope"},
	}
	for _, c := range cases {
		code, out, errs := e.run(c.args...)
		t.Logf("%s: exit %d, stderr: %s", c.name, code, errs)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("%s: code %d (want %d), stdout %q, stderr %q (want it to contain %q)", c.name, code, c.code, out, errs, c.stderr)
		}
	}
	// With --yes the destructive call goes through (deleting a note that
	// does not exist is the tool's own error: exit 1, text on stderr).
	code, out, errs := e.run("call", "demo.delete_note", "name=nothing", "--yes")
	t.Logf("delete_note --yes: exit %d, stdout %q, stderr %q", code, out, errs)
	if code != 0 && code != ExitToolError {
		t.Fatalf("delete_note --yes: code %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestConfigErrorExit2(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, ".mcp.json"), []byte("{\n  \"mcpServers\": {,\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := e.run("ls")
	t.Logf("stderr: %s", errs)
	if code != ExitUsage || !strings.Contains(errs, ".mcp.json:2:") {
		t.Fatalf("ls with a broken config: code %d, stderr %q", code, errs)
	}
}

func TestUnsetVariableExit2(t *testing.T) {
	e := newEnv(t)
	cfg := `{"mcpServers": {"gh": {"command": "true", "env": {"TOKEN": "${MCPX_TEST_UNSET_TOKEN}"}}}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := e.run("trust"); code != 0 {
		t.Fatalf("trust: code %d, stderr %q", code, errs)
	}
	// Discovery reads the cache only and needs no variable.
	if code, _, errs := e.run("ls"); code != 0 {
		t.Fatalf("ls with an unset variable: code %d, stderr %q", code, errs)
	}
	// Starting the server does: one line naming the variable and the server.
	code, _, errs := e.run("call", "gh.anything")
	t.Logf("stderr: %s", errs)
	if code != ExitUsage || !strings.Contains(errs, "MCPX_TEST_UNSET_TOKEN") || !strings.Contains(errs, "gh") {
		t.Fatalf("call with an unset variable: code %d, stderr %q", code, errs)
	}
}

func TestInitRefusesToOverwrite(t *testing.T) {
	e := newEnv(t)
	if code, _, errs := e.run("init"); code != 0 {
		t.Fatalf("init: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := e.run("init"); code != ExitUsage || !strings.Contains(errs, "already exists") {
		t.Fatalf("second init: code %d, stderr %q", code, errs)
	}
}

// Errors the commands word themselves get the "mcpx: " prefix once.
func TestCommandErrorsArePrefixedOnce(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"logs"}, ExitUnavailable},
		{[]string{"resolve", filepath.Join(e.dir, "missing")}, ExitUsage},
	} {
		code, _, errs := e.run(tc.args...)
		if code != tc.code || !strings.HasPrefix(errs, "mcpx: ") || strings.Contains(errs, "mcpx: mcpx:") {
			t.Errorf("%v: code %d, stderr %q; want code %d and one \"mcpx: \" prefix", tc.args, code, errs, tc.code)
		}
	}
}
