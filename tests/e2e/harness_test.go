// Package e2e drives the built mcpx binary, as a user would, in hermetic
// HOME/XDG trees against real MCP servers: the Go fixture and the pinned npm
// servers of tests/npm.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
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

var (
	mcpxBin    string // the mcpx binary under test
	mcpxdBin   string // the mcpxd binary beside it
	fixtureBin string // internal/fixture/cmd/mcpx-fixture
	repoRoot   string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// Every test here builds and drives the binaries against real
		// servers: minutes, not what -short is for. scripts/test runs them.
		fmt.Println("tests/e2e: skipped with -short (end-to-end tests; scripts/test runs them)")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	// Not under the temp dir: the service managers refuse to write a unit
	// whose ExecStart points into a temporary build directory.
	if err := os.MkdirAll(filepath.Join(repoRoot, "bin"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp(filepath.Join(repoRoot, "bin"), "e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Plain builds: these tests drive processes, and a race-enabled binary
	// sleeps a second at every exit (GORACE atexit_sleep_ms), which the
	// daemons under systemd cannot be told otherwise. The packages' own
	// tests run with -race.
	if mcpxBin, err = testkit.BuildBinaries(dir); err == nil {
		mcpxdBin = filepath.Join(dir, "mcpxd")
		fixtureBin, err = testkit.Build(dir, testkit.Fixture)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Env is one hermetic user: its own HOME, XDG directories and runtime dir,
// and a marker variable that every process it starts inherits, so the test
// can find them in the process table.
type Env struct {
	t      testing.TB
	Root   string
	Home   string
	Run    string // XDG_RUNTIME_DIR
	Work   string // the working directory commands run in
	Marker string
	extra  map[string]string
	// Bin, when set, is the mcpx binary commands run (default mcpxBin).
	Bin string
}

// NewEnv makes a hermetic environment and stops its daemons at cleanup.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	// Short root: socket paths must stay under 100 bytes.
	root, err := os.MkdirTemp("", "mx")
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{
		t:      t,
		Root:   root,
		Home:   filepath.Join(root, "home"),
		Run:    filepath.Join(root, "run"),
		Work:   filepath.Join(root, "work"),
		Marker: "MCPX_E2E_MARKER=" + filepath.Base(root),
		extra:  map[string]string{"MCPX_SERVICE": "direct"},
	}
	for _, d := range []string{e.Home, e.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(e.Run, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Mcpx("stop", "--all")
		e.killMarked()
		os.RemoveAll(root)
	})
	return e
}

// Set adds or overrides an environment variable for later commands.
func (e *Env) Set(k, v string) { e.extra[k] = v }

// Environ is the environment commands get.
func (e *Env) Environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.Home,
		"XDG_RUNTIME_DIR=" + e.Run,
		"LANG=C.UTF-8",
		e.Marker,
	}
	for k, v := range e.extra {
		env = append(env, k+"="+v)
	}
	return env
}

// WriteFile writes content to path relative to Root (or absolute). A
// config file (.json, .jsonc, .toml) is then trusted with `mcpx trust`, as
// its author would: these tests write their own project configs.
func (e *Env) WriteFile(path, content string) string {
	e.t.Helper()
	path = e.WriteUntrusted(path, content)
	switch filepath.Ext(path) {
	case ".json", ".jsonc", ".toml":
		if r := e.Mcpx("trust", path); r.Code != 0 {
			e.t.Fatalf("%s", r)
		}
	}
	return path
}

// WriteUntrusted writes content to path relative to Root (or absolute),
// without trusting it.
func (e *Env) WriteUntrusted(path, content string) string {
	e.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Root, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// Result is one finished command.
type Result struct {
	Args   []string
	Stdout string
	Stderr string
	Code   int
}

func (r Result) String() string {
	return fmt.Sprintf("mcpx %s → exit %d\nstdout: %s\nstderr: %s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
}

// Mcpx runs the binary in Work with a bounded time.
func (e *Env) Mcpx(args ...string) Result {
	return e.McpxIn(e.Work, args...)
}

// McpxIn runs the binary in dir.
func (e *Env) McpxIn(dir string, args ...string) Result {
	bin := mcpxBin
	if e.Bin != "" {
		bin = e.Bin
	}
	return e.Exec(bin, dir, args...)
}

// Exec runs bin in dir with the Env's environment, its output captured,
// the way McpxIn runs mcpx.
func (e *Env) Exec(bin, dir string, args ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = e.Environ()
	if len(benchValgrind) > 0 { // TestPerformance counts instructions
		cmd = exec.CommandContext(ctx, benchValgrind[0], append(append(benchValgrind[1:], bin), args...)...)
		cmd.Dir = dir
		cmd.Env = append(e.Environ(), "GODEBUG=asyncpreemptoff=1")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	if err != nil {
		var ee *exec.ExitError
		if ok := asExit(err, &ee); ok {
			r.Code = ee.ExitCode()
		} else {
			r.Code = -1
			r.Stderr += "\n(run error: " + err.Error() + ")"
		}
	}
	return r
}

func asExit(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// MustOK runs and fails the test unless the exit code is 0.
func (e *Env) MustOK(args ...string) Result {
	e.t.Helper()
	r := e.Mcpx(args...)
	if r.Code != 0 {
		e.t.Fatalf("%s", r)
	}
	return r
}

// JSON runs `mcpx --json args…`, requires exit 0 and decodes stdout into v.
func (e *Env) JSON(v any, args ...string) Result {
	e.t.Helper()
	r := e.MustOK(append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		e.t.Fatalf("decode %s: %v", r, err)
	}
	return r
}

// Marked lists the pids of live processes carrying this Env's marker,
// except zombies.
func (e *Env) Marked() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		var pid int
		if _, err := fmt.Sscanf(ent.Name(), "%d", &pid); err != nil {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "environ"))
		if err != nil || !bytes.Contains(environ, []byte(e.Marker+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// MarkedCmdlines returns the command lines of the marked processes.
func (e *Env) MarkedCmdlines() []string {
	var out []string
	for _, pid := range e.Marked() {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")))
	}
	return out
}

func (e *Env) killMarked() {
	for _, pid := range e.Marked() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// npmBin returns the path of a pinned npm server's executable, failing under
// CI (scripts/setup installs them) and skipping elsewhere when absent.
func npmBin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot, "tests", "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: scripts/setup installs tests/npm (%v)", name, err)
		}
		t.Skipf("%s is not installed; run scripts/setup", name)
	}
	return p
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
