package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Info files and key records are read by the CLI and the daemon.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"daemonKey":"abc","socket":"/s","pid":1,"pidStart":5,"manager":"direct","configs":["/a"],"version":"v","startedAt":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"daemonKey":"abc","configs":["/p/.mcp.json"],"createdAt":"2026-01-01T00:00:00Z","stateDir":"/s","cacheDir":"/c"}`))
	f.Add([]byte(`{"pid": -1}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := filepath.Join(t.TempDir(), "keys")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "k.json")
		if err := os.WriteFile(p, src, 0o600); err != nil {
			t.Fatal(err)
		}
		if info, err := ReadInfo(p); err == nil {
			_ = info.Running() // must not signal or panic on any pid
		}
		_, _ = ReadKeyRecord(p)
	})
}
