package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema loads one of docs/schemas with formats asserted.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "docs", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return sch
}

// validateFile validates the JSON file at path against sch.
func validateFile(t *testing.T, sch *jsonschema.Schema, path string) error {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return sch.Validate(doc)
}

func TestInfoFileSchema(t *testing.T) {
	sch := compileSchema(t, "info-file.schema.json")
	dir := t.TempDir()
	write := func(v any) string {
		p := filepath.Join(dir, "0123456789ab.json")
		if err := WriteJSONAtomic(p, v, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := InfoFile{DaemonKey: "0123456789ab", SchemaHash: "0123456789abcdef", Socket: "/run/user/1000/mcpx/0123456789ab.sock",
		Pid: 42, Manager: "systemd", Configs: []string{"/home/u/p/.mcpx.json"}, Version: "dev", StartedAt: time.Now().UTC()}
	if err := validateFile(t, sch, write(good)); err != nil {
		t.Errorf("valid info file rejected: %v", err)
	}
	builtin := good
	builtin.DaemonKey, builtin.Configs, builtin.Manager = "builtin", []string{}, "direct"
	if err := validateFile(t, sch, write(builtin)); err != nil {
		t.Errorf("built-in info file rejected: %v", err)
	}

	// Each defect must be caught; otherwise the schema proves nothing.
	bad := map[string]func(m map[string]any){
		"configHash present": func(m map[string]any) { m["configHash"] = "0123456789abcdef" },
		"short schemaHash":   func(m map[string]any) { m["schemaHash"] = "0123" },
		"key as schemaHash":  func(m map[string]any) { m["schemaHash"] = "0123456789ab" },
		"relative socket":    func(m map[string]any) { m["socket"] = "mcpx.sock" },
		"unknown manager":    func(m map[string]any) { m["manager"] = "upstart" },
		"null configs":       func(m map[string]any) { m["configs"] = nil },
		"missing pid":        func(m map[string]any) { delete(m, "pid") },
		"bad startedAt":      func(m map[string]any) { m["startedAt"] = "yesterday" },
	}
	for name, mutate := range bad {
		m := map[string]any{"daemonKey": "0123456789ab", "schemaHash": "0123456789abcdef", "socket": "/s.sock", "pid": 1,
			"manager": "direct", "configs": []string{}, "version": "dev", "startedAt": "2026-01-02T03:04:05Z"}
		mutate(m)
		if err := validateFile(t, sch, write(m)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestKeyRecordSchema(t *testing.T) {
	sch := compileSchema(t, "key-record.schema.json")
	p := filepath.Join(t.TempDir(), "builtin.json")
	for _, rec := range []KeyRecord{
		{DaemonKey: "0123456789ab", Configs: []string{"/a/.mcpx.json", "/home/u/.config/mcpx/config.json"}, CreatedAt: time.Now().UTC()},
		{DaemonKey: "builtin", Configs: []string{}, CreatedAt: time.Now()},
		{DaemonKey: "builtin", Configs: []string{}, CreatedAt: time.Now(), StateDir: "/s", CacheDir: "/c", TokenStore: "file"},
	} {
		if err := WriteJSONAtomic(p, rec, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := validateFile(t, sch, p); err != nil {
			t.Errorf("valid key record %+v rejected: %v", rec, err)
		}
	}
	// A record written with a nil slice says "configs": null: rejected.
	if err := WriteJSONAtomic(p, KeyRecord{DaemonKey: "builtin", CreatedAt: time.Now()}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(t, sch, p); err == nil {
		t.Error("key record with null configs accepted")
	}
	if err := WriteJSONAtomic(p, map[string]any{"daemonKey": "BUILTIN", "configs": []string{}, "createdAt": "2026-01-02T03:04:05Z"}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(t, sch, p); err == nil {
		t.Error("key record with a malformed daemonKey accepted")
	}
}
