package api

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteJSONAtomicRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.json")
	in := InfoFile{DaemonKey: "abc", SchemaHash: "s", Socket: "/x.sock", Pid: 7, Manager: "direct",
		Configs: []string{"/a"}, Version: "dev", StartedAt: time.Unix(100, 0).UTC()}
	if err := WriteJSONAtomic(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	out, err := ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.DaemonKey != in.DaemonKey || out.Pid != 7 || !out.StartedAt.Equal(in.StartedAt) || out.Configs[0] != "/a" {
		t.Errorf("round trip: got %+v", out)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left temp files: %v", ents)
	}
}

func TestReadMissing(t *testing.T) {
	_, err := ReadKeyRecord(filepath.Join(t.TempDir(), "none.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{"), 0o600)
	if _, err := ReadInfo(bad); err == nil {
		t.Fatal("want error for malformed file")
	}
}
