package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// under keeps the paths inside root, so files an unrelated process left in
// /tmp or / cannot disturb the test.
func under(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, root+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	return out
}

func TestDiscoverOrder(t *testing.T) {
	root := tempRoot(t)
	home := filepath.Join(root, "home")
	xdg := filepath.Join(root, "xdg")
	proj := filepath.Join(home, "proj")
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sub1 := write(t, filepath.Join(sub, ".mcp.json"), "{}")
	p1 := write(t, filepath.Join(proj, ".mcpx.json"), "{}")
	p2 := write(t, filepath.Join(proj, ".mcpx", "config.json"), "{}")
	p3 := write(t, filepath.Join(proj, ".mcp.json"), "{}")
	h1 := write(t, filepath.Join(home, ".mcp.json"), "{}")
	user := write(t, filepath.Join(xdg, "mcpx", "config.json"), "{}")
	// Not sources: a directory named like a config, an unreadable file.
	if err := os.MkdirAll(filepath.Join(proj, "a", ".mcpx.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	locked := write(t, filepath.Join(proj, "a", ".mcp.json"), "{}")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}

	got, err := Discover(sub, env(e))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sub1, p1, p2, p3, h1, user}
	if os.Geteuid() == 0 { // root reads a mode-0 file
		want = []string{sub1, locked, p1, p2, p3, h1, user}
	}
	if got := under(root, got); !reflect.DeepEqual(got, want) {
		t.Errorf("sources =\n%q\nwant\n%q", got, want)
	}

	t.Run("XDG default under HOME", func(t *testing.T) {
		def := write(t, filepath.Join(home, ".config", "mcpx", "config.json"), "{}")
		got, err := Discover(home, env(map[string]string{"HOME": home, "XDG_CONFIG_HOME": "relative/ignored"}))
		if err != nil {
			t.Fatal(err)
		}
		if got := under(root, got); !reflect.DeepEqual(got, []string{h1, def}) {
			t.Errorf("sources = %q", got)
		}
	})
	t.Run("MCPX_CONFIG is the only source", func(t *testing.T) {
		got, err := Discover(sub, env(map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg, "MCPX_CONFIG": "../../.mcpx.json"}))
		if err != nil || !reflect.DeepEqual(got, []string{p1}) {
			t.Errorf("sources = %q, %v", got, err)
		}
	})
	t.Run("MCPX_CONFIG missing is an error", func(t *testing.T) {
		_, err := Discover(sub, env(map[string]string{"MCPX_CONFIG": filepath.Join(root, "none.json")}))
		if !errors.Is(err, ErrNoConfigFile) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "none.json") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("MCPX_CONFIG that is not a regular file says what it is", func(t *testing.T) {
		fifo := filepath.Join(root, "fifo.json")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		dangling := filepath.Join(root, "dangling.json")
		if err := os.Symlink(filepath.Join(root, "gone.json"), dangling); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			path, want string
			kind       error
		}{
			{fifo, fifo + " (MCPX_CONFIG) is a FIFO (named pipe), not a regular file", ErrNotRegular},
			{"/dev/null", "/dev/null (MCPX_CONFIG) is a character device, not a regular file", ErrNotRegular},
			{root, root + " (MCPX_CONFIG) is a directory, not a regular file", ErrNotRegular},
			{dangling, dangling + " (MCPX_CONFIG) is a symlink to a file that does not exist", fs.ErrNotExist},
			{filepath.Join(root, "none.json"), "none.json (MCPX_CONFIG) does not exist", ErrNoConfigFile},
		} {
			_, err := Discover(sub, env(map[string]string{"MCPX_CONFIG": c.path}))
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("MCPX_CONFIG=%s: err = %v; want %v saying %q", c.path, err, c.kind, c.want)
			}
		}
	})
	t.Run("nothing found means built-in", func(t *testing.T) {
		empty := filepath.Join(root, "empty")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := Discover(empty, env(map[string]string{"HOME": empty}))
		if err != nil || len(under(root, got)) != 0 {
			t.Errorf("sources = %q, %v", got, err)
		}
	})
}

func TestDiscoverSymlinks(t *testing.T) {
	root := tempRoot(t)
	real := filepath.Join(root, "real", "dir")
	cfg := write(t, filepath.Join(real, ".mcpx.json"), `{"mcpServers": {"a": {"command": "x"}}}`)
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// A config file that is itself a symlink to one already found.
	if err := os.Symlink(cfg, filepath.Join(real, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"HOME": filepath.Join(root, "nohome")})
	viaLink, err := Discover(filepath.Join(root, "link", "dir"), e)
	if err != nil {
		t.Fatal(err)
	}
	viaReal, err := Discover(real, e)
	if err != nil {
		t.Fatal(err)
	}
	if got := under(root, viaLink); !reflect.DeepEqual(got, []string{cfg}) {
		t.Errorf("via link = %q, want [%s] (resolved, deduplicated)", got, cfg)
	}
	if KeyOf(viaLink) != KeyOf(viaReal) {
		t.Errorf("keys differ: %s vs %s", KeyOf(viaLink), KeyOf(viaReal))
	}
	a, err := LoadDir(filepath.Join(root, "link", "dir"), e, "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadDir(real, e, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if a.DaemonKey() != b.DaemonKey() || a.SchemaHash() != b.SchemaHash() {
		t.Errorf("identities differ through a symlink")
	}
	// Load resolves sources it is handed unresolved.
	c, err := Load([]string{filepath.Join(root, "link", "dir", ".mcpx.json")}, "/x")
	if err != nil || !reflect.DeepEqual(c.Sources, []string{cfg}) {
		t.Errorf("Load sources = %q, %v", c.Sources, err)
	}
}
