package resolve

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// world is a hermetic user: its own paths and environment.
type world struct {
	root   string
	paths  config.Paths
	getenv config.Getenv
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME":            filepath.Join(root, "home"),
		"XDG_CONFIG_HOME": filepath.Join(root, "home", ".config"),
		"XDG_STATE_HOME":  filepath.Join(root, "home", ".state"),
		"XDG_CACHE_HOME":  filepath.Join(root, "home", ".cache"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"),
	}
	getenv := func(k string) string { return env[k] }
	paths, err := config.DefaultPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{paths.Runtime, paths.KeysDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return &world{root: root, paths: paths, getenv: getenv}
}

// project makes root/name with a .mcpx.json holding content.
func (w *world) project(t *testing.T, name, content string) (dir, cfg string) {
	t.Helper()
	dir = filepath.Join(w.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, ".mcpx.json")
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

const echoConfig = `{
  // a comment, as people write them
  "mcpServers": {"echo": {"command": "/bin/cat", "args": ["-u"]}}
}`

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestResolveDirComputed(t *testing.T) {
	w := newWorld(t)
	dir, cfg := w.project(t, "proj", echoConfig)
	r, err := Dir(dir, w.paths, w.getenv)
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.LoadDir(dir, w.getenv, "/irrelevant")
	if err != nil {
		t.Fatal(err)
	}
	key := config.KeyOf([]string{cfg})
	if r.Dir != dir || r.DaemonKey != string(key) || !slices.Equal(r.Configs, []string{cfg}) {
		t.Errorf("got %+v, want dir %s key %s configs [%s]", r, dir, key, cfg)
	}
	if r.Socket != w.paths.Socket(key) || r.State != api.DaemonStopped || r.Manager != "" {
		t.Errorf("socket/state/manager = %q %q %q", r.Socket, r.State, r.Manager)
	}
	if r.SchemaHash != string(want.SchemaHash()) {
		t.Errorf("schemaHash = %q, want %q", r.SchemaHash, want.SchemaHash())
	}
}

func TestResolveDirThroughSymlinkAndSubdir(t *testing.T) {
	w := newWorld(t)
	dir, cfg := w.project(t, "proj", echoConfig)
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(w.root, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	r, err := DirWith(link, w.paths, w.getenv, Options{Manager: "direct"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir != sub {
		t.Errorf("dir = %q, want the link's target %q", r.Dir, sub)
	}
	if r.DaemonKey != string(config.KeyOf([]string{cfg})) {
		t.Errorf("key = %q, want the project's", r.DaemonKey)
	}
	if r.Manager != "direct" {
		t.Errorf("manager = %q, want the default passed in", r.Manager)
	}
}

func TestResolveDirBuiltin(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(w.root, "empty")
	os.Mkdir(dir, 0o755)
	r, err := DirWith(dir, w.paths, w.getenv, Options{Self: "/opt/mcpx"})
	if err != nil {
		t.Fatal(err)
	}
	if r.DaemonKey != string(config.BuiltinKey) || r.Configs == nil || len(r.Configs) != 0 {
		t.Errorf("got key %q configs %#v, want builtin and []", r.DaemonKey, r.Configs)
	}
	if want := config.Builtin("/opt/mcpx").SchemaHash(); r.SchemaHash != string(want) {
		t.Errorf("schemaHash = %q, want the built-in config's %q", r.SchemaHash, want)
	}
}

func TestResolveDirErrors(t *testing.T) {
	w := newWorld(t)
	var de *DirError

	_, err := Dir("relative/dir", w.paths, w.getenv)
	if !errors.As(err, &de) || de.Code != api.CodeDirectoryNotAbsolute {
		t.Errorf("relative: err = %v, want CodeDirectoryNotAbsolute", err)
	}

	_, err = Dir(filepath.Join(w.root, "missing"), w.paths, w.getenv)
	if !errors.As(err, &de) || de.Code != api.CodeDirectoryNotFound || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err = %v, want CodeDirectoryNotFound wrapping ErrNotExist", err)
	}

	_, cfg := w.project(t, "proj", echoConfig)
	_, err = Dir(cfg, w.paths, w.getenv)
	if !errors.As(err, &de) || de.Code != api.CodeDirectoryNotFound {
		t.Errorf("a file: err = %v, want CodeDirectoryNotFound", err)
	}

	// A syntax error (an unusable entry alone is only that server's problem).
	bad, badCfg := w.project(t, "bad", "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\",,}\n  }\n}\n")
	_, err = Dir(bad, w.paths, w.getenv)
	var pe *config.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("bad config: err = %v, want *config.ParseError", err)
	}
	if pe.File != badCfg || pe.Line != 3 {
		t.Errorf("parse error at %s:%d:%d, want %s:3", pe.File, pe.Line, pe.Col, badCfg)
	}
}

// A config named by MCPX_CONFIG in the process environment must not leak
// into an answer computed with a getenv that lacks it.
func TestResolveDirUsesOnlyGivenEnvironment(t *testing.T) {
	w := newWorld(t)
	_, other := w.project(t, "other", echoConfig)
	t.Setenv("MCPX_CONFIG", other)
	t.Setenv("MCPX_SOCKET", filepath.Join(w.root, "override.sock"))
	dir, cfg := w.project(t, "proj", `{"mcpServers": {"b": {"url": "http://127.0.0.1:1/mcp"}}}`)
	r, err := Dir(dir, w.paths, w.getenv)
	if err != nil {
		t.Fatal(err)
	}
	key := config.KeyOf([]string{cfg})
	if r.DaemonKey != string(key) || r.Socket != w.paths.Socket(key) {
		t.Errorf("got key %q socket %q, want the directory's own %q %q", r.DaemonKey, r.Socket, key, w.paths.Socket(key))
	}
}

func writeInfo(t *testing.T, w *world, key config.DaemonKey, pid int, configs []string) *config.InfoFile {
	t.Helper()
	info := &config.InfoFile{DaemonKey: string(key), SchemaHash: "0123456789abcdef", Socket: filepath.Join(w.root, "custom.sock"),
		Pid: pid, PidStart: proc.StartTime(pid), Manager: "systemd", Configs: configs, Version: "dev", StartedAt: time.Now().UTC().Truncate(time.Second)}
	if err := config.WriteJSONAtomic(w.paths.Info(key), info, 0o600); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestResolveDirRunningAndStale(t *testing.T) {
	w := newWorld(t)
	dir, cfg := w.project(t, "proj", echoConfig)
	key := config.KeyOf([]string{cfg})

	info := writeInfo(t, w, key, os.Getpid(), []string{cfg})
	r, err := DirWith(dir, w.paths, w.getenv, Options{Manager: "direct"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != api.DaemonRunning || r.Socket != info.Socket || r.Manager != "systemd" || r.SchemaHash != info.SchemaHash {
		t.Errorf("running: got %+v, want state running and the info file's socket, manager, schemaHash", r)
	}

	writeInfo(t, w, key, deadPid(t), []string{cfg})
	r, err = DirWith(dir, w.paths, w.getenv, Options{Manager: "direct"})
	if err != nil {
		t.Fatal(err)
	}
	cfgNow, _ := config.Load([]string{cfg}, "")
	if r.State != api.DaemonStale || r.Socket != w.paths.Socket(key) || r.Manager != "direct" || r.SchemaHash != string(cfgNow.SchemaHash()) {
		t.Errorf("stale: got %+v, want state stale with computed socket and schemaHash", r)
	}

	os.WriteFile(w.paths.Info(key), []byte("{not json"), 0o600)
	r, err = Dir(dir, w.paths, w.getenv)
	if err != nil || r.State != api.DaemonStale {
		t.Errorf("malformed info file: got %+v, %v; want state stale", r, err)
	}
}

func TestListKeysAndPrune(t *testing.T) {
	w := newWorld(t)
	_, liveCfg := w.project(t, "live", echoConfig)
	_, goneCfg := w.project(t, "gone", echoConfig)
	_, crashedCfg := w.project(t, "crashed", echoConfig)
	live, gone, crashed := config.KeyOf([]string{liveCfg}), config.KeyOf([]string{goneCfg}), config.KeyOf([]string{crashedCfg})

	for k, c := range map[config.DaemonKey]string{live: liveCfg, gone: goneCfg, crashed: crashedCfg} {
		rec := config.KeyRecord{DaemonKey: string(k), Configs: []string{c}, CreatedAt: time.Now().UTC()}
		if err := config.WriteJSONAtomic(w.paths.KeyRecord(k), rec, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeInfo(t, w, live, os.Getpid(), []string{liveCfg})
	writeInfo(t, w, crashed, deadPid(t), []string{crashedCfg})
	os.WriteFile(w.paths.EnvFile(gone), []byte("PATH=/bin\n"), 0o600)
	os.Remove(goneCfg)
	// Not ours: ignored.
	os.WriteFile(filepath.Join(w.paths.Runtime, "notakey.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(w.paths.KeysDir(), "README"), []byte("x"), 0o600)

	keys, err := ListKeys(w.paths)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]KeyInfo{}
	for _, k := range keys {
		byKey[k.DaemonKey] = k
	}
	if len(keys) != 3 {
		t.Fatalf("ListKeys = %+v, want 3 keys", keys)
	}
	if !slices.IsSortedFunc(keys, func(a, b KeyInfo) int { return strings.Compare(a.DaemonKey, b.DaemonKey) }) {
		t.Errorf("not sorted: %+v", keys)
	}
	if k := byKey[string(live)]; k.State != api.DaemonRunning || k.Pid != os.Getpid() || !k.ConfigsExist || k.Manager != "systemd" || k.Socket != filepath.Join(w.root, "custom.sock") {
		t.Errorf("live: %+v", k)
	}
	if k := byKey[string(gone)]; k.State != api.DaemonStopped || k.ConfigsExist || k.Socket != w.paths.Socket(gone) || !slices.Equal(k.Configs, []string{goneCfg}) {
		t.Errorf("gone: %+v", k)
	}
	if k := byKey[string(crashed)]; k.State != api.DaemonStale || !k.ConfigsExist {
		t.Errorf("crashed: %+v", k)
	}

	removed, err := Prune(w.paths)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{w.paths.Info(crashed), w.paths.KeyRecord(gone), w.paths.EnvFile(gone)}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("Prune removed %v, want %v", removed, want)
	}
	for _, p := range []string{w.paths.Info(live), w.paths.KeyRecord(live), w.paths.KeyRecord(crashed)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Prune removed %s: %v", p, err)
		}
	}
	keys, _ = ListKeys(w.paths)
	if len(keys) != 2 {
		t.Errorf("after prune: %+v, want live and crashed (stopped)", keys)
	}
	if again, err := Prune(w.paths); err != nil || len(again) != 0 {
		t.Errorf("second Prune = %v, %v; want nothing", again, err)
	}
}

func TestListKeysEmpty(t *testing.T) {
	root := t.TempDir()
	keys, err := ListKeys(config.Paths{Runtime: filepath.Join(root, "none"), State: filepath.Join(root, "none")})
	if err != nil || len(keys) != 0 {
		t.Errorf("ListKeys on nothing = %v, %v", keys, err)
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[config.DaemonKey]bool{"builtin": true, "0123456789ab": true, "0123456789AB": false, "0123456789a": false, "../../etc/pa": false, "": false} {
		if got := ValidKey(k); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", k, got, want)
		}
	}
}
