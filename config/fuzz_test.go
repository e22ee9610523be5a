package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Untrusted input: project configs are written by whoever wrote the
// repository. Parsing must never panic. (An empty server name "" is
// accepted today; see testdata/fuzz/FuzzParseConfig/c2c5372e626af2ab.)
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["-y"], "env": {"K": "${V}"}}}}`))
	f.Add([]byte("// c\n{\"servers\": {\"b\": {\"url\": \"https://h/${T}\", \"headers\": {\"A\": \"B\"}, /* x */ \"mcpx\": {\"scope\": \"cwd\", \"maxMessageBytes\": 2048}}}}"))
	f.Add([]byte(`{"mcp": {"c": {"command": "y", "mcpx": {"policy": {"destructive": "deny"}}}}, "mcpx": {"cache": {"maxBytes": "1GiB"}, "idleExit": "5m"}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x",,}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, _ = parseFile("/fuzz/.mcp.json", src)
	})
}

// The whole load path (merging, expansion checks) over a file on disk.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x"}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"url": "http://u:${P}@h/${T}?q=${Q}"}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		p := filepath.Join(t.TempDir(), ".mcp.json")
		if err := os.WriteFile(p, src, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load([]string{p}, "/bin/mcpx")
		if err != nil {
			return
		}
		lookup := func(string) (string, bool) { return "value", true }
		for _, s := range cfg.Servers {
			_, _ = s.Expand(lookup)
			NewRedactor(s.Secrets(lookup)).String("x value y")
			_ = s.Hash()
		}
		_ = cfg.SchemaHash()
	})
}

// The captured environment file, read by the daemon.
func FuzzReadEnvFile(f *testing.F) {
	f.Add([]byte(`{"PATH": "/bin", "TOKEN": "x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, src []byte) {
		p := filepath.Join(t.TempDir(), "k.env")
		if err := os.WriteFile(p, src, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = ReadEnvFile(p)
	})
}
