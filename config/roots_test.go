package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mcpx.roots: relative directories are taken from the entry's project
// directory (for .mcpx.json, the directory holding it), absolute ones
// kept; an empty path is refused with its place.
func TestRoots(t *testing.T) {
	c, err := loadString(t, `{"mcpServers": {"a": {"command": "x", "mcpx": {"roots": ["src", "/srv/data/../shared"]}}, "b": {"command": "y"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Servers["a"]
	if a.Dir != filepath.Dir(a.Source) {
		t.Fatalf("project directory %q, want %q", a.Dir, filepath.Dir(a.Source))
	}
	want := []string{filepath.Join(a.Dir, "src"), "/srv/shared"}
	if got := a.RootDirs(); !slices.Equal(got, want) {
		t.Errorf("RootDirs = %q, want %q", got, want)
	}
	if got := c.Servers["b"].RootDirs(); got != nil {
		t.Errorf("b lists no roots, RootDirs = %q", got)
	}

	_, err = loadString(t, `{"mcpServers": {"a": {"command": "x", "mcpx": {"roots": ["ok", " "]}}}}`)
	if err == nil || !strings.Contains(err.Error(), ":1:") || !strings.Contains(err.Error(), "mcpx.roots") {
		t.Errorf("empty root: %v", err)
	}
	_, err = loadString(t, `{"mcpx": {"roots": ["src"]}, "mcpServers": {}}`)
	if err == nil || !strings.Contains(err.Error(), `unknown key "roots"`) {
		t.Errorf("top-level roots: %v", err)
	}
}
