package client

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// The shell's MCPX_TOKEN_STORE goes into the runtime key record, where a
// daemon started by launchd or systemd reads it; a value the daemon would
// refuse is a configuration error before anything starts.
func TestRuntimeKeyRecordCarriesTheTokenStore(t *testing.T) {
	base, env := hermeticTree(t, "work")
	for _, tc := range []struct{ value, want string }{{"keyring", "keyring"}, {"", ""}, {"file", "file"}} {
		env[config.EnvTokenStore] = tc.value
		c, err := New(Options{Dir: filepath.Join(base, "work"), Getenv: func(k string) string { return env[k] }, Self: "/bin/true"})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.prepare(); err != nil {
			t.Fatal(err)
		}
		rec, err := config.ReadKeyRecord(c.paths.RuntimeKeyRecord(c.key))
		if err != nil || rec.TokenStore != tc.want {
			t.Fatalf("MCPX_TOKEN_STORE=%q: record %+v, %v", tc.value, rec, err)
		}
	}
	env[config.EnvTokenStore] = "vault"
	c, err := New(Options{Dir: filepath.Join(base, "work"), Getenv: func(k string) string { return env[k] }, Self: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if err := c.prepare(); !errors.As(err, &ce) {
		t.Fatalf("MCPX_TOKEN_STORE=vault: %v, want a *ConfigError", err)
	}
}

// hermeticTree makes a temporary tree with home, run and dirs (relative
// to it) and returns it with the environment whose HOME and XDG
// directories point into it. The tree's path is short (not t.TempDir's,
// which holds the test's name): a socket in it must fit sun_path.
func hermeticTree(t *testing.T, dirs ...string) (string, map[string]string) {
	t.Helper()
	base, err := os.MkdirTemp("", "mcpxc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	env := map[string]string{
		"HOME":            filepath.Join(base, "home"),
		"XDG_RUNTIME_DIR": filepath.Join(base, "run"),
		"XDG_STATE_HOME":  filepath.Join(base, "state"),
		"XDG_CACHE_HOME":  filepath.Join(base, "cache"),
		"XDG_CONFIG_HOME": filepath.Join(base, "config"),
	}
	for _, d := range append([]string{"home", "run"}, dirs...) {
		if err := os.MkdirAll(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return base, env
}
