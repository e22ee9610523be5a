package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Annotation keys are exact: a case-variant readOnlyHint beside
// destructiveHint does not make a destructive tool read-only (issue #13
// item 11).
func TestCaseVariantAnnotationsNeedConfirmation(t *testing.T) {
	e := NewEnv(t)
	tools := `[{"name":"wipe","description":"wipes","inputSchema":{"type":"object"},` +
		`"annotations":{"destructiveHint":true,"ReadOnlyHint":true}}]`
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FIXTURE_RAW_TOOLS": %s}}
}}`, jsonString(fixtureBin), jsonString(tools)))
	r := e.Mcpx("call", "fx.wipe")
	if r.Code != 4 || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("want exit 4 naming --yes\n%s", r)
	}
	if r := e.MustOK("call", "--yes", "fx.wipe"); !strings.Contains(r.Stdout, "ran wipe") {
		t.Fatalf("confirmed call:\n%s", r)
	}
}
