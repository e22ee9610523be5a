package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// With Options.Snapshot a command skips reading the key records and the
// captured environment while their stamps say they hold what it would
// write, and rewrites them as soon as anything differs: a variable's
// value, a record removed, the token store.
func TestSnapshotKeepsRecordsCurrent(t *testing.T) {
	base, env := hermeticTree(t, "work", "config/mcpx")
	env["TOKEN"] = "one"
	if err := os.WriteFile(filepath.Join(base, "config", "mcpx", "config.json"), []byte(`{"mcpServers": {"a": {"command": "x", "env": {"T": "${TOKEN}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	prepared := func() *Client {
		t.Helper()
		c, err := New(Options{Dir: filepath.Join(base, "work"), Getenv: func(k string) string { return env[k] }, Self: "/bin/true", Snapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.prepare(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	envFile := func(c *Client) map[string]string {
		t.Helper()
		m, err := config.ReadEnvFile(c.paths.EnvFile(c.key))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	prepared()
	time.Sleep(2100 * time.Millisecond) // the records settle (config's settleTime)
	prepared()                          // checks them, and remembers their stamps
	c := prepared()
	if c.snap.FromSources() {
		t.Fatal("the configuration was read from its sources again")
	}
	st := c.getenv(config.EnvTokenStore)
	if !c.snap.Unchanged(c.paths.EnvFile(c.key), config.EnvDigest(c.brief.CaptureEnv(c.lookupEnv))) ||
		!c.snap.Unchanged(c.paths.RuntimeKeyRecord(c.key), config.FieldsDigest(append([]string{string(c.key), c.paths.State, c.paths.Cache, st}, c.configs()...)...)) ||
		!c.snap.Unchanged(c.paths.KeyRecord(c.key), config.FieldsDigest(c.configs()...)) {
		t.Fatal("settled records are not taken as unchanged")
	}

	env["TOKEN"] = "two"
	if c = prepared(); envFile(c)["TOKEN"] != "two" {
		t.Fatalf("a changed variable did not reach the env file: %v", envFile(c))
	}
	if err := os.Remove(c.paths.RuntimeKeyRecord(c.key)); err != nil {
		t.Fatal(err)
	}
	c = prepared()
	if _, err := config.ReadKeyRecord(c.paths.RuntimeKeyRecord(c.key)); err != nil {
		t.Fatalf("a removed runtime key record was not written again: %v", err)
	}
	env[config.EnvTokenStore] = "file"
	c = prepared()
	if rec, err := config.ReadKeyRecord(c.paths.RuntimeKeyRecord(c.key)); err != nil || rec.TokenStore != "file" {
		t.Fatalf("a changed token store did not reach the runtime key record: %+v, %v", rec, err)
	}
}
