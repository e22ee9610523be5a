package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDefaultPathsXDG(t *testing.T) {
	root := tempRoot(t)
	p, err := DefaultPaths(env(map[string]string{
		"HOME": "/home/u", "XDG_RUNTIME_DIR": filepath.Join(root, "run"), "XDG_STATE_HOME": "/s",
		"XDG_CACHE_HOME": "/c", "XDG_CONFIG_HOME": "/g", "MCPX_SOCKET": "/ignored.sock",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Paths{Runtime: filepath.Join(root, "run", "mcpx"), State: "/s/mcpx", Cache: "/c/mcpx", Config: "/g/mcpx"}
	if p != want {
		t.Fatalf("paths = %+v, want %+v", p, want)
	}
	if _, err := os.Stat(p.Runtime); !os.IsNotExist(err) {
		t.Errorf("DefaultPaths created %s under XDG_RUNTIME_DIR", p.Runtime)
	}
	k := DaemonKey("0123456789ab")
	for got, want := range map[string]string{
		p.Socket(k):    want.Runtime + "/0123456789ab.sock",
		p.Info(k):      want.Runtime + "/0123456789ab.json",
		p.EnvFile(k):   want.Runtime + "/0123456789ab.env",
		p.Lock(k):      want.Runtime + "/0123456789ab.lock",
		p.KeysDir():    "/s/mcpx/keys",
		p.KeyRecord(k): "/s/mcpx/keys/0123456789ab.json",
		p.Log(k):       "/s/mcpx/0123456789ab.log",
		p.CAS():        "/c/mcpx/cas",
		p.Schemas():    "/c/mcpx/schemas",
		p.ConfigFile(): "/g/mcpx/config.json",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestDefaultPathsHomeDefaults(t *testing.T) {
	root := tempRoot(t)
	tmp := filepath.Join(root, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	p, err := DefaultPaths(env(map[string]string{
		"HOME": "/home/u", "TMPDIR": tmp,
		"XDG_STATE_HOME": "rel/ignored", "XDG_RUNTIME_DIR": "also/relative",
	}))
	if err != nil {
		t.Fatal(err)
	}
	wantRuntime := filepath.Join(tmp, "mcpx-"+strconv.Itoa(os.Getuid()))
	want := Paths{Runtime: wantRuntime, State: "/home/u/.local/state/mcpx", Cache: "/home/u/.cache/mcpx", Config: "/home/u/.config/mcpx"}
	if p != want {
		t.Fatalf("paths = %+v, want %+v", p, want)
	}
	fi, err := os.Lstat(wantRuntime)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime dir: %v, %v", fi, err)
	}
	// A loosened directory is refused, not silently used.
	if err := os.Chmod(wantRuntime, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = DefaultPaths(env(map[string]string{"HOME": "/home/u", "TMPDIR": tmp}))
	if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), wantRuntime) {
		t.Errorf("err = %v, want ErrUnsafeDir naming the directory", err)
	}
	// So is a symlink standing in for it.
	if err := os.Remove(wantRuntime); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, wantRuntime); err != nil {
		t.Fatal(err)
	}
	if _, err := DefaultPaths(env(map[string]string{"HOME": "/home/u", "TMPDIR": tmp})); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("symlinked runtime dir: err = %v", err)
	}
}

func TestSocketLongPathFallback(t *testing.T) {
	long := "/" + strings.Repeat("d", 90) + "/mcpx"
	p := Paths{Runtime: long}
	k := DaemonKey("0123456789ab")
	h := sha256.Sum256([]byte(long))
	want := filepath.Join("/tmp", "mcpx-"+strconv.Itoa(os.Getuid())+"-"+hex.EncodeToString(h[:])[:8], "0123456789ab.sock")
	if got := p.Socket(k); got != want {
		t.Errorf("socket = %s, want %s", got, want)
	}
	if len(want) > 100 {
		t.Errorf("fallback too long: %d", len(want))
	}
	// Other files stay in the runtime directory.
	if got := p.Info(k); got != long+"/0123456789ab.json" {
		t.Errorf("info = %s", got)
	}
	// Exactly at the limit: no fallback.
	edge := Paths{Runtime: "/" + strings.Repeat("e", 100-len("/0123456789ab.sock")-1)}
	if got := edge.Socket(k); len(got) != 100 || !strings.HasPrefix(got, edge.Runtime) {
		t.Errorf("edge socket = %s (%d)", got, len(got))
	}
}

func TestEnsureRuntime(t *testing.T) {
	root := tempRoot(t)
	p := Paths{Runtime: filepath.Join(root, "run", "mcpx")}
	for range 2 { // idempotent
		if err := p.EnsureRuntime(); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(p.Runtime)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime: %v %v", fi, err)
	}
	if err := p.EnsureSocketDir("abc"); err != nil {
		t.Fatal(err)
	}

	// A runtime path so long that sockets fall back also gets its short directory.
	deep := filepath.Join(root, strings.Repeat("x", 100), "mcpx")
	lp := Paths{Runtime: deep}
	if err := lp.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	short := filepath.Dir(lp.Socket("0123456789ab"))
	t.Cleanup(func() { os.RemoveAll(short) })
	if fi, err := os.Lstat(short); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("short socket dir %s: %v %v", short, fi, err)
	}
}

func TestEnsureRuntimeRefusesUnsafeDirs(t *testing.T) {
	root := tempRoot(t)
	open := filepath.Join(root, "open", "mcpx")
	if err := os.MkdirAll(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := (Paths{Runtime: open}).EnsureRuntime(); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("EnsureRuntime(0755 dir) = %v, want ErrUnsafeDir", err)
	}

	target := filepath.Join(root, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := (Paths{Runtime: link}).EnsureRuntime(); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("EnsureRuntime(symlink) = %v, want ErrUnsafeDir", err)
	}
}
