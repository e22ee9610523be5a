package config

import (
	"os"
	"path/filepath"
	"testing"
)

// tempRoot is a fresh directory with symlinks resolved, so expected paths
// compare equal to what Discover returns.
func tempRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// write creates path (and its parents) holding content.
func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// env is a Getenv over a map.
func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

// loadString writes content to a file and loads it alone.
func loadString(t *testing.T, content string) (*Config, error) {
	t.Helper()
	return Load([]string{write(t, filepath.Join(tempRoot(t), ".mcpx.json"), content)}, "/usr/bin/mcpx")
}

// loadTrusted trusts the sources in a fresh trust store and loads them.
func loadTrusted(t *testing.T, sources ...string) (*Config, error) {
	t.Helper()
	store := TrustStoreAt(t.TempDir())
	for _, s := range sources {
		if _, err := store.TrustFile(s); err != nil {
			t.Fatal(err)
		}
	}
	return LoadWith(sources, LoadOptions{Self: "/usr/bin/mcpx", Trust: store})
}

// loadStringAt writes content to a trusted file and loads it.
func loadStringAt(t *testing.T, content string) (*Config, error) {
	t.Helper()
	return loadTrusted(t, write(t, filepath.Join(tempRoot(t), ".mcpx.json"), content))
}
