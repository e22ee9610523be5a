package mcpxd

import (
	"os"
	"path/filepath"
	"testing"
)

// A Homebrew-like layout: the build in a versioned directory, linked from
// a stable one. The agent names the link.
func TestStableAmong(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cellar := filepath.Join(root, "Cellar", "mcpx", "1.2.3", "bin", Name)
	other := filepath.Join(root, "Cellar", "mcpx", "1.2.2", "bin", Name)
	for _, p := range []string{cellar, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	link := filepath.Join(bin, Name)
	if err := os.Symlink(filepath.Join("..", "Cellar", "mcpx", "1.2.3", "bin", Name), link); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(bin, "mcpxd-old")
	if err := os.Symlink(other, stale); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"the link", []string{link}, link},
		{"the link, after one that is the build itself", []string{cellar, link}, link},
		{"a link to another build is not it", []string{stale}, cellar},
		{"nothing but missing or relative paths", []string{filepath.Join(bin, "missing"), "bin/mcpxd"}, cellar},
		{"no candidate", nil, cellar},
	} {
		if got := stableAmong(cellar, tc.candidates); got != tc.want {
			t.Errorf("%s: stableAmong = %s, want %s", tc.name, got, tc.want)
		}
	}
}
