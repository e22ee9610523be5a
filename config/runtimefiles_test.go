package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteJSONAtomicRoundTrip(t *testing.T) {
	for name, write := range map[string]func(string, any, uint32) error{
		"WriteJSONAtomic": WriteJSONAtomic, "WriteRuntimeJSON": WriteRuntimeJSON,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "k.json")
		in := InfoFile{DaemonKey: "abc", SchemaHash: "s", Socket: "/x.sock", Pid: 7, Manager: "direct",
			Configs: []string{"/a"}, Version: "dev", StartedAt: time.Unix(100, 0).UTC()}
		if err := write(path, InfoFile{DaemonKey: "old"}, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := write(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode = %v, want 0600", name, st.Mode().Perm())
		}
		out, err := ReadInfo(path)
		if err != nil {
			t.Fatal(err)
		}
		if out.DaemonKey != in.DaemonKey || out.Pid != 7 || !out.StartedAt.Equal(in.StartedAt) || out.Configs[0] != "/a" {
			t.Errorf("%s: round trip: got %+v", name, out)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("%s: left temp files: %v", name, ents)
		}
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
