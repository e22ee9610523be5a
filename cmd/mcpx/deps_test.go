package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI links no MCP library and no JSON-schema library: those are
// mcpxd's (and their package init alone costs more than a hello-world
// process).
func TestNoMCPOrSchemaLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/mcpx-dev/mcpx/cmd/mcpx").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/mark3labs/mcp-go", "github.com/santhosh-tekuri/jsonschema", "github.com/google/jsonschema-go"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("cmd/mcpx depends on %s", dep)
			}
		}
	}
}

// Nor what only costs it at start: every package linked runs its init in
// every mcpx process, and these build tables there (encoding/xml's
// HTMLEntity map: 51,000 instructions, 7 % of `mcpx version`) or pull in
// more that do. net/http is mcpxd's; the CLI speaks HTTP/1.1 through
// client/h1. docs/performance.md, "What mcpx pays before main".
func TestNoStartupHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/mcpx-dev/mcpx/cmd/mcpx").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "encoding/xml", "net/http":
			t.Errorf("cmd/mcpx depends on %s", dep)
		}
	}
}
