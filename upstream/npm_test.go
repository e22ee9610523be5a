package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// TestNPMServerEverything runs the TypeScript SDK's reference server, which
// has tools, prompts and resources, when scripts/setup installed it.
func TestNPMServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the npm server (node) (-short)")
	}
	bin, err := filepath.Abs("../tests/npm/node_modules/.bin/mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("npm servers not installed (scripts/setup)")
	}
	p := newPools(t, Options{})
	spec := Spec{
		Server: &config.Server{Name: "everything", Command: bin, Args: []string{"stdio"}, Transport: config.TransportStdio},
		Hash:   "everything",
		Env:    os.Environ(),
	}
	l, err := p.List(context.Background(), spec, Caller{})
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Join(toolNames(t, l.Tools), " ")
	if !strings.Contains(names, "echo") {
		t.Errorf("tools %s lack echo", names)
	}
	if len(l.Prompts) == 0 {
		t.Errorf("no prompts listed")
	}
	if len(l.Resources) == 0 {
		t.Errorf("no resources listed")
	}
	if got := call(t, p, spec, Caller{}, "echo", `{"message":"hi"}`); !strings.Contains(got, "hi") {
		t.Errorf("echo = %q", got)
	}
}
