package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchConfig is a config file as people keep them: servers with args,
// env and mcpx blocks, comments and trailing commas.
func benchConfig(servers int) string {
	var b strings.Builder
	b.WriteString("// my MCP servers\n{\n  \"mcpServers\": {\n")
	for i := range servers {
		fmt.Fprintf(&b, `    // server %d
    "s%d": {
      "command": "npx",
      "args": ["-y", "@example/server-%d", "--root", "/home/me/work"], // pinned
      "env": {"TOKEN": "${TOKEN_%d}", "LOG": "info"},
      /* limits */
      "mcpx": {"idleTimeout": "10m", "tools": ["read_*", "list_*"]},
    },
`, i, i, i, i)
	}
	b.WriteString("  },\n  \"mcpx\": {\"idleExit\": \"20m\", \"policy\": {\"destructive\": \"confirm\"}},\n}\n")
	return b.String()
}

// BenchmarkParseFile is the JSONC parse and the server model of one file
// of 10 servers (what every command pays per config file).
func BenchmarkParseFile(b *testing.B) {
	src := []byte(benchConfig(10))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseFile("bench.json", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad is LoadWith of a user file and a trusted project file
// (10 servers each) in a temporary HOME: reading, trust, parsing,
// merging and the stamp, as the CLI loads its config on every command.
func BenchmarkLoad(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(root, "home")
	user := filepath.Join(home, ".config", "mcpx", "config.json")
	project := filepath.Join(root, "work", ".mcpx.json")
	for _, p := range []string{user, project} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(benchConfig(10)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	getenv := env(map[string]string{"HOME": home})
	store := TrustStoreAt(filepath.Join(home, ".local", "state", "mcpx"))
	if _, err := store.TrustFile(project); err != nil {
		b.Fatal(err)
	}
	opts := LoadOptions{Self: "/usr/bin/mcpx", Getenv: getenv, Trust: store}
	sources := []string{project, user}
	b.ReportAllocs()
	for b.Loop() {
		c, err := LoadWith(sources, opts)
		if err != nil || len(c.Servers) != 10 {
			b.Fatalf("%v, %d servers", err, len(c.Servers))
		}
	}
}
