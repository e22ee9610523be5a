package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples loads every JSON example of docs/configuration.md, so the
// user documentation cannot drift from what Load accepts. An example that
// starts with a comment naming another host's file ("// opencode.jsonc")
// is loaded as that file, by that host's reader.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(?:jsonc|json)\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d examples", len(blocks))
	}
	for i, m := range blocks {
		src := strings.ReplaceAll(m[1], `"mcpServers": { … }`, `"mcpServers": {}`)
		if strings.HasPrefix(strings.TrimSpace(src), `"`) { // a single entry
			src = `{"mcpServers": {` + src + `}}`
		}
		name := ".mcpx.json"
		if f := hostFileComment.FindStringSubmatch(src); f != nil {
			name = f[1]
		}
		c, err := Load([]string{write(t, filepath.Join(tempRoot(t), name), src)}, "/usr/bin/mcpx")
		if err != nil {
			t.Errorf("example %d: %v\n%s", i, err, src)
			continue
		}
		if len(c.Warnings) != 0 {
			t.Errorf("example %d warns: %q", i, c.Warnings)
		}
		if name != ".mcpx.json" && len(c.Servers) == 0 {
			t.Errorf("example %d (%s) has no servers", i, name)
		}
	}
}

// hostFileComment is the first line of an example of another host's file.
var hostFileComment = regexp.MustCompile(`^\s*// ([\w.-]+\.jsonc?)\b`)
