package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples loads every JSON example of docs/configuration.md, so the
// user documentation cannot drift from what Load accepts.
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
		c, err := loadString(t, src)
		if err != nil {
			t.Errorf("example %d: %v\n%s", i, err, src)
			continue
		}
		if len(c.Warnings) != 0 {
			t.Errorf("example %d warns: %q", i, c.Warnings)
		}
	}
}
