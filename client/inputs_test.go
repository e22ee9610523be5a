package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// A VS Code ${input:ID} is asked once through Ask (with the input's
// description and password flag), kept in the captured environment, and
// never asked again while the environment file holds it.
func TestInputsAskedOnceAndCaptured(t *testing.T) {
	base := t.TempDir()
	env := map[string]string{
		"HOME":            filepath.Join(base, "home"),
		"XDG_RUNTIME_DIR": filepath.Join(base, "run"),
		"XDG_STATE_HOME":  filepath.Join(base, "state"),
	}
	vs := filepath.Join(base, "home", ".config", "Code", "User", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(vs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vs, []byte(`{
  "inputs": [{"type": "promptString", "id": "tok", "description": "API token", "password": true}],
  "servers": {"gh": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${input:tok}"}}}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []config.Input
	ask := func(in config.Input) (string, error) { asked = append(asked, in); return "s3cret", nil }
	newClient := func() *Client {
		c, err := New(Options{Dir: base, Getenv: func(k string) string { return env[k] }, Self: "/bin/true", Ask: ask})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.prepare(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := newClient()
	if len(asked) != 1 || asked[0].ID != "tok" || !asked[0].Password || asked[0].Description != "API token" {
		t.Fatalf("asked %+v", asked)
	}
	got, err := config.ReadEnvFile(c.paths.EnvFile(c.key))
	if err != nil || got["input:tok"] != "s3cret" {
		t.Fatalf("captured %v, %v", got, err)
	}
	exp, err := c.cfg.Servers["gh"].Expand(func(k string) (string, bool) { v, ok := got[k]; return v, ok })
	if err != nil || exp.Headers["Authorization"] != "Bearer s3cret" {
		t.Fatalf("expanded %+v, %v", exp, err)
	}
	newClient()
	if len(asked) != 1 {
		t.Errorf("asked again: %+v", asked)
	}
}
