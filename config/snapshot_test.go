package config

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
)

// snapWorld is a HOME, a project and a snapshot store, with settleTime
// short enough for a test: what was written before settle() is old enough
// to be stamped.
type snapWorld struct {
	root, home, proj, run string
	env                   map[string]string
	store                 Snapshots
}

// testSettle is settleTime in these tests: longer than a kernel tick (the
// granularity of file timestamps here), so a change made after a load
// began always moves a stamp the load kept.
const testSettle = 60 * time.Millisecond

func newSnapWorld(t *testing.T) *snapWorld {
	t.Helper()
	old := settleTime
	settleTime = testSettle
	t.Cleanup(func() { settleTime = old })
	root := tempRoot(t)
	w := &snapWorld{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "work", "proj"), run: filepath.Join(root, "run")}
	w.env = map[string]string{"HOME": w.home, "XDG_STATE_HOME": filepath.Join(root, "state"), "XDG_RUNTIME_DIR": w.run}
	for _, d := range []string{w.proj, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(w.run, 0o700); err != nil {
		t.Fatal(err)
	}
	w.store = Snapshots{Dir: filepath.Join(w.run, "mcpx", "snapshots")}
	return w
}

// settle waits until everything written so far may be stamped.
func (w *snapWorld) settle() { time.Sleep(testSettle + 20*time.Millisecond) }

func (w *snapWorld) userConfig() string {
	return filepath.Join(w.home, ".config", "mcpx", "config.json")
}

// load loads w.proj through the store and saves the snapshot.
func (w *snapWorld) load(t *testing.T) *Snapshot {
	t.Helper()
	return w.loadDir(t, w.proj)
}

func (w *snapWorld) loadDir(t *testing.T, dir string) *Snapshot {
	t.Helper()
	sn, err := w.store.Load(dir, env(w.env), "/usr/bin/mcpxd")
	if err != nil {
		t.Fatal(err)
	}
	if err := sn.Save(); err != nil {
		t.Fatal(err)
	}
	return sn
}

// expect loads dir through the store and checks that the brief is what
// loading every source gives, and that the snapshot was (warm) or was not
// used.
func (w *snapWorld) expect(t *testing.T, dir string, warm bool, what string) *Snapshot {
	t.Helper()
	sn := w.loadDir(t, dir)
	if sn.FromSources() == warm {
		t.Fatalf("%s: the snapshot was used: %v, want %v", what, !sn.FromSources(), warm)
	}
	cfg, err := LoadDir(dir, env(w.env), "/usr/bin/mcpxd")
	if err != nil {
		t.Fatal(err)
	}
	if want := BriefOf(cfg); !reflect.DeepEqual(sn.Brief, want) {
		t.Fatalf("%s: brief\n%+v\nwant\n%+v", what, sn.Brief, want)
	}
	return sn
}

// warmUp loads dir twice after settling: the second load must be served
// by the snapshot.
func (w *snapWorld) warmUp(t *testing.T, dir string) {
	t.Helper()
	w.settle()
	if sn := w.expect(t, dir, false, "first load"); sn.why != "" {
		t.Fatalf("first load cannot be snapshotted: %s", sn.why)
	}
	w.expect(t, dir, true, "second load")
}

func TestSnapshotServesWarmLoads(t *testing.T) {
	w := newSnapWorld(t)
	write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x", "env": {"T": "${TOKEN}"}}, "slow": {"command": "y", "mcpx": {"callTimeout": "9m"}}}}`)
	mcp := write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"p": {"command": "z"}}}`)
	if _, err := DefaultTrustStore(env(w.env)).TrustFile(mcp); err != nil {
		t.Fatal(err)
	}
	w.warmUp(t, w.proj)
	sn := w.expect(t, w.proj, true, "third load")
	if got := sn.Brief.CallTimeouts("slow"); got.Call != 9*time.Minute {
		t.Fatalf("slow's call timeout from the snapshot: %v", got)
	}
	if !reflect.DeepEqual(sn.Brief.Vars, []string{"TOKEN"}) {
		t.Fatalf("vars from the snapshot: %q", sn.Brief.Vars)
	}
	cfg, err := sn.Config()
	if err != nil || cfg.Stamp != sn.Brief.Stamp || len(cfg.Servers) != 3 {
		t.Fatalf("Config after a warm load: %v, %+v", err, cfg)
	}
}

// Every change that can change what a load gives is seen: the next load
// reads the sources again (and its brief is that of a fresh load).
func TestSnapshotSeesEveryChange(t *testing.T) {
	type world = snapWorld
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, w *world)
		change func(t *testing.T, w *world)
		dir    func(w *world) string // default w.proj
	}{
		{"an edit within the same second that keeps size and mtime",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "aaa"}}}`)
			},
			func(t *testing.T, w *world) {
				fi, err := os.Stat(w.userConfig())
				if err != nil {
					t.Fatal(err)
				}
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "bbb"}}}`)
				if err := os.Chtimes(w.userConfig(), fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a new .mcp.json in a parent directory",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				write(t, filepath.Join(filepath.Dir(w.proj), ".mcp.json"), `{"mcpServers": {"up": {"command": "x"}}}`)
			}, nil},
		{"a new host directory with its file (.cursor/mcp.json)",
			func(t *testing.T, w *world) {},
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".cursor", "mcp.json"), `{"mcpServers": {"cur": {"command": "x"}}}`)
			}, nil},
		{"a new file in an existing host directory (.vscode/mcp.json)",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".vscode", "settings.json"), `{}`)
			},
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".vscode", "mcp.json"), `{"servers": {"vs": {"command": "x"}}}`)
			}, nil},
		{"a project file trusted",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".mcpx.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				if _, err := DefaultTrustStore(env(w.env)).TrustFile(filepath.Join(w.proj, ".mcpx.json")); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a project file untrusted",
			func(t *testing.T, w *world) {
				p := write(t, filepath.Join(w.proj, ".mcpx.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
				if _, err := DefaultTrustStore(env(w.env)).TrustFile(p); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, w *world) {
				if ok, err := DefaultTrustStore(env(w.env)).Untrust(filepath.Join(w.proj, ".mcpx.json")); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}, nil},
		{"a trusted project file made group-writable",
			func(t *testing.T, w *world) {
				p := write(t, filepath.Join(w.proj, ".mcpx.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
				if _, err := DefaultTrustStore(env(w.env)).TrustFile(p); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, w *world) {
				if err := os.Chmod(filepath.Join(w.proj, ".mcpx.json"), 0o664); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a source removed",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				if err := os.Remove(filepath.Join(w.proj, ".mcp.json")); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a source replaced by rename with the same content",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				tmp := write(t, w.userConfig()+".new", `{"mcpServers": {"a": {"command": "x"}}}`)
				if err := os.Rename(tmp, w.userConfig()); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a symlinked source retargeted",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.root, "one.json"), `{"mcpServers": {"one": {"command": "x"}}}`)
				write(t, filepath.Join(w.root, "two.json"), `{"mcpServers": {"two": {"command": "x"}}}`)
				if err := os.MkdirAll(filepath.Dir(w.userConfig()), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(w.root, "one.json"), w.userConfig()); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, w *world) {
				tmp := w.userConfig() + ".link"
				if err := os.Symlink(filepath.Join(w.root, "two.json"), tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, w.userConfig()); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"a symlinked directory on the way to a source retargeted",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.root, "cfg-a", "mcpx", "config.json"), `{"mcpServers": {"a": {"command": "x"}}}`)
				write(t, filepath.Join(w.root, "cfg-b", "mcpx", "config.json"), `{"mcpServers": {"b": {"command": "x"}}}`)
				if err := os.Symlink(filepath.Join(w.root, "cfg-a"), filepath.Join(w.home, ".config")); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, w *world) {
				tmp := filepath.Join(w.home, ".config.new")
				if err := os.Symlink(filepath.Join(w.root, "cfg-b"), tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(w.home, ".config")); err != nil {
					t.Fatal(err)
				}
			}, nil},
		{"the working directory reached through a retargeted symlink",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.root, "p1", ".mcp.json"), `{"mcpServers": {"one": {"command": "x"}}}`)
				write(t, filepath.Join(w.root, "p2", ".mcp.json"), `{"mcpServers": {"two": {"command": "x"}}}`)
				if err := os.Symlink(filepath.Join(w.root, "p1"), filepath.Join(w.root, "here")); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, w *world) {
				tmp := filepath.Join(w.root, "here.new")
				if err := os.Symlink(filepath.Join(w.root, "p2"), tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(w.root, "here")); err != nil {
					t.Fatal(err)
				}
			}, func(w *world) string { return filepath.Join(w.root, "here") }},
		{"a variable that moves the user config",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
				write(t, filepath.Join(w.root, "xdg", "mcpx", "config.json"), `{"mcpServers": {"b": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) { w.env["XDG_CONFIG_HOME"] = filepath.Join(w.root, "xdg") }, nil},
		{"MCPX_CONFIG set",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
				write(t, filepath.Join(w.root, "only.json"), `{"mcpServers": {"only": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) { w.env["MCPX_CONFIG"] = filepath.Join(w.root, "only.json") }, nil},
		{"the hosts list limits the hosts read",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
				write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers": {"cur": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"hosts": ["claude-code"], "mcpServers": {"a": {"command": "x"}}}`)
			}, nil},
		{"another host's user file appears",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.home, ".config", "zed", "settings.json"), `{"context_servers": {"z": {"command": "x"}}}`)
			}, nil},
		{"Claude Code approves a .mcp.json server",
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
				write(t, filepath.Join(w.home, ".claude.json"), `{}`)
			},
			func(t *testing.T, w *world) {
				write(t, filepath.Join(w.home, ".claude.json"), `{"projects": {`+quote(w.proj)+`: {"enabledMcpjsonServers": ["p"]}}}`)
			}, nil},
		{"a missing name appears in a directory that changed recently",
			func(t *testing.T, w *world) {
				write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			},
			func(t *testing.T, w *world) {
				// Unrelated churn first, so the directory's stamp
				// moved and its missing names are what is checked.
				write(t, filepath.Join(w.proj, "notes.txt"), "x")
				write(t, filepath.Join(w.proj, ".mcpx.json"), `{"mcpServers": {"p": {"command": "x"}}}`)
			}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSnapWorld(t)
			tc.setup(t, w)
			dir := w.proj
			if tc.dir != nil {
				dir = tc.dir(w)
			}
			w.warmUp(t, dir)
			tc.change(t, w)
			w.expect(t, dir, false, "after the change")
		})
	}
}

// A file of no interest added to a directory on the way keeps the snapshot
// in use (its missing names are looked up again), and once the directory's
// stamp has settled the snapshot is written again with it.
func TestSnapshotKeepsThroughUnrelatedChanges(t *testing.T) {
	w := newSnapWorld(t)
	write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
	w.warmUp(t, w.proj)
	write(t, filepath.Join(w.proj, "main.go"), "package main")
	write(t, filepath.Join(w.home, ".bash_history"), "ls")
	sn := w.expect(t, w.proj, true, "after unrelated files")
	if sn.save {
		t.Fatal("a directory changed just now was taken as settled")
	}
	w.settle()
	sn = w.expect(t, w.proj, true, "after they settled")
	if sn.save {
		t.Fatal("Save left the snapshot unsaved")
	}
	d, ok := readSnapshot(sn.file)
	if !ok {
		t.Fatal("the rewritten snapshot does not read back")
	}
	for _, e := range d.entries {
		if (e.path == w.proj || e.path == w.home) && !e.settled {
			t.Fatalf("%s is still unsettled in the rewritten snapshot", e.path)
		}
	}
}

// A source changed less than settleTime before a load is not snapshotted:
// its stamp could hide the next change.
func TestSnapshotRefusesRecentChanges(t *testing.T) {
	w := newSnapWorld(t)
	old := settleTime
	settleTime = time.Hour
	defer func() { settleTime = old }()
	write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
	w.expect(t, w.proj, false, "first load")
	w.expect(t, w.proj, false, "second load")
	if _, err := os.Stat(w.store.Dir); err == nil {
		if ents, _ := os.ReadDir(w.store.Dir); len(ents) > 0 {
			t.Fatalf("a snapshot of an unsettled source was written: %v", ents)
		}
	}
}

// A snapshot file is used only when it is the user's own 0600 regular
// file with the expected content; anything else is ignored, never an
// error.
func TestSnapshotFileChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, file string)
	}{
		{"readable by others", func(t *testing.T, file string) { chmod(t, file, 0o644) }},
		{"a symlink", func(t *testing.T, file string) {
			if err := os.Rename(file, file+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(file+".real", file); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, file string) {
			b, _ := os.ReadFile(file)
			if err := os.WriteFile(file, b[:len(b)/2], 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"of another format", func(t *testing.T, file string) {
			b, _ := os.ReadFile(file)
			if err := os.WriteFile(file, []byte(strings.Replace(string(b), "snapshot 1", "snapshot 0", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"owned by another user", func(t *testing.T, file string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			if err := os.Chown(file, 4321, 4321); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSnapWorld(t)
			write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
			w.warmUp(t, w.proj)
			sn := w.load(t)
			tc.spoil(t, sn.file)
			w.expect(t, w.proj, false, "spoilt snapshot")
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// A snapshot made by another build of the program is not used.
func TestSnapshotOfAnotherBuild(t *testing.T) {
	w := newSnapWorld(t)
	write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
	w.warmUp(t, w.proj)
	sn := w.load(t)
	d, ok := readSnapshot(sn.file)
	if !ok {
		t.Fatal("snapshot does not read back")
	}
	d.exeSt.ino++
	b, _ := d.encode()
	if err := os.WriteFile(sn.file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	w.expect(t, w.proj, false, "snapshot of another build")
}

// The serve records (whether a URL server is mcpx itself) are inputs too:
// a record that appears, and a serve process that dies, are seen.
func TestSnapshotSeesServeRecords(t *testing.T) {
	w := newSnapWorld(t)
	write(t, w.userConfig(), `{"mcpServers": {"r": {"url": "http://127.0.0.1:18765/mcp"}}}`)
	w.warmUp(t, w.proj)

	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	paths, err := DefaultPaths(env(w.env))
	if err != nil {
		t.Fatal(err)
	}
	rec := ServeRecord{Pid: sleeper.Process.Pid, PidStart: proc.StartTime(sleeper.Process.Pid), Addr: "127.0.0.1:18765"}
	b, _ := json.Marshal(rec)
	if err := os.MkdirAll(paths.ServeRecords(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.ServeRecords(), strconv.Itoa(rec.Pid)+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	sn := w.expect(t, w.proj, false, "a serve record appeared")
	if cfg, _ := sn.Config(); !cfg.Servers["r"].Self {
		t.Fatal("the server at serve's address is not marked as mcpx itself")
	}
	w.warmUp(t, w.proj)
	sleeper.Process.Kill()
	sleeper.Wait()
	sn = w.expect(t, w.proj, false, "the serve process died")
	if cfg, _ := sn.Config(); cfg.Servers["r"].Self {
		t.Fatal("the server is still taken for mcpx itself")
	}
}

// Remember keeps a client's file stamp only once it settled; Unchanged
// holds while the file and the digest stay.
func TestSnapshotRecords(t *testing.T) {
	w := newSnapWorld(t)
	write(t, w.userConfig(), `{"mcpServers": {"a": {"command": "x"}}}`)
	rec := write(t, filepath.Join(w.run, "mcpx", "k.env"), `{"A": "1"}`)
	w.settle()
	sn := w.load(t)
	sn.Remember(rec, "d1")
	if !sn.Unchanged(rec, "d1") || sn.Unchanged(rec, "d2") {
		t.Fatal("Unchanged right after Remember")
	}
	if err := sn.Save(); err != nil {
		t.Fatal(err)
	}
	sn = w.expect(t, w.proj, true, "warm load with a record")
	if !sn.Unchanged(rec, "d1") {
		t.Fatal("the record did not survive the snapshot")
	}
	write(t, rec, `{"A": "2"}`)
	if sn.Unchanged(rec, "d1") {
		t.Fatal("a rewritten file is taken as unchanged")
	}
	sn.Remember(rec, "d3") // too recent to keep
	if sn.Unchanged(rec, "d3") {
		t.Fatal("a stamp that has not settled was kept")
	}
}

func TestSnapshotEncoding(t *testing.T) {
	d := snapshotData{exe: "/bin/mcpx", exeSt: stamp{1, 2, 3, 4, 5, 6, 7}, uid: 1000, dir: "/p", self: "/bin/mcpxd",
		env:     []envInput{{"HOME", "/h"}, {"MCPX_CONFIG", ""}},
		entries: []stampEntry{{path: "/", st: stamp{mode: 0o40755}, settled: true, absent: []string{".mcp.json", "a b"}}, {path: "/p", listed: true}},
		procs:   []procInput{{42, 7, true}},
		brief: Brief{Sources: []string{"/p/.mcp.json"}, Stamp: "s", Vars: []string{"A"},
			Inputs:   []InputUse{{Server: "x", Var: "input:k", Input: Input{ID: "k", Description: "key\nline", Password: true}}},
			Timeouts: map[string]Timeouts{"x": {Call: time.Minute, Start: time.Second}}},
		records: []record{{path: "/r", st: stamp{ino: 9}, digest: "dd"}},
	}
	b, ok := d.encode()
	if !ok {
		t.Fatal("encode failed")
	}
	got, ok := decodeSnapshot(b)
	if !ok || !reflect.DeepEqual(got, d) {
		t.Fatalf("round trip:\n%+v\n%+v", got, d)
	}
	for i := range b {
		if _, ok := decodeSnapshot(b[:i]); ok {
			t.Fatalf("a snapshot cut at %d bytes decodes", i)
		}
	}
	d.brief.Stamp = "a\x00b"
	if _, ok := d.encode(); ok {
		t.Fatal("a NUL in a field encodes")
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	d := snapshotData{exe: "/x", dir: "/p", entries: []stampEntry{{path: "/", absent: []string{"a"}}}, brief: Brief{Sources: []string{"/s"}}}
	b, _ := d.encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, ok := decodeSnapshot(b); ok {
			again, ok := d.encode()
			if !ok {
				t.Fatal("a decoded snapshot does not encode")
			}
			if _, ok := decodeSnapshot(again); !ok {
				t.Fatal("a re-encoded snapshot does not decode")
			}
		}
	})
}
