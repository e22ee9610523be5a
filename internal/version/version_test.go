package version

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestBinaryIDChangesWithTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a:b", "mcpxd")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	v1 := BinaryID(p)
	if v1 == "" || BinaryPath(v1) != p {
		t.Fatalf("BinaryID = %q, BinaryPath = %q, want path %s", v1, BinaryPath(v1), p)
	}
	later := time.Now().Add(time.Second)
	if err := os.WriteFile(p, []byte("v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, later, later)
	if v2 := BinaryID(p); v2 == v1 || BinaryPath(v2) != p {
		t.Fatalf("after rewriting: %q (was %q)", v2, v1)
	}
	if BinaryID(filepath.Join(dir, "missing")) != "" || BinaryPath("nonsense") != "" {
		t.Fatal("a missing file or a malformed id has an identity")
	}
}
