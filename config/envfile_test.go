package config

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestEnvFileRoundTrip(t *testing.T) {
	path := filepath.Join(tempRoot(t), "rt", "k.env")
	got, err := ReadEnvFile(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	e := map[string]string{"PATH": "/bin", "TOKEN": "s3cr\"et\n", "EMPTY": ""}
	wrote, err := WriteEnvFile(path, e)
	if err != nil || !wrote {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi, err)
	}
	got, err = ReadEnvFile(path)
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Fatalf("read back %v, %v", got, err)
	}

	// Unchanged values: not rewritten (the file's mtime and inode stay).
	old := time.Unix(1_000_000, 0)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	wrote, err = WriteEnvFile(path, map[string]string{"EMPTY": "", "TOKEN": "s3cr\"et\n", "PATH": "/bin"})
	if err != nil || wrote {
		t.Fatalf("unchanged write: wrote=%v err=%v", wrote, err)
	}
	after, _ := os.Stat(path)
	if !after.ModTime().Equal(old) || !os.SameFile(before, after) {
		t.Error("file touched although unchanged")
	}

	// A changed value is written; no temporary files remain.
	e["TOKEN"] = "new"
	if wrote, err := WriteEnvFile(path, e); err != nil || !wrote {
		t.Fatalf("changed write: %v %v", wrote, err)
	}
	if got, _ := ReadEnvFile(path); got["TOKEN"] != "new" {
		t.Errorf("after change: %v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("leftovers in dir: %v", entries)
	}

	// A corrupt file is an error naming it.
	write(t, path, "not json")
	if _, err := ReadEnvFile(path); err == nil {
		t.Error("corrupt env file accepted")
	}
}

func TestCaptureEnv(t *testing.T) {
	c, err := loadStringAt(t, `{"mcpServers": {"a": {"url": "https://h/${TOKEN}", "headers": {"X": "${UNSET}"}}, "b": {"command": "x", "env": {"K": "${OTHER:-d}"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := CaptureEnv(c, env(map[string]string{"TOKEN": "t", "OTHER": "o", "PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "STRAY": "leak"}))
	want := map[string]string{"TOKEN": "t", "OTHER": "o", "PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("captured = %v, want %v", got, want)
	}
	from := CaptureEnvFrom(c, func(k string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "", "PATH": "/bin"}[k]
		return v, ok
	})
	if !reflect.DeepEqual(from, map[string]string{"TOKEN": "", "PATH": "/bin"}) {
		t.Errorf("CaptureEnvFrom = %v", from)
	}
}

func TestServerEnvIsTheServersOwn(t *testing.T) {
	captured := map[string]string{"PATH": "/bin", "HTTPS_PROXY": "http://p", "no_proxy": "x", "A_TOKEN": "a", "B_TOKEN": "b", "input:k": "v"}
	a := &Server{Name: "a", Command: "x", Env: map[string]string{"T": "${A_TOKEN}"}, Headers: map[string]string{"K": "${input:k}"}}
	got := ServerEnv(a, captured)
	want := map[string]string{"PATH": "/bin", "HTTPS_PROXY": "http://p", "no_proxy": "x", "A_TOKEN": "a"}
	if !maps.Equal(got, want) {
		t.Errorf("ServerEnv = %v, want %v", got, want)
	}
}
