package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/testkit"
	"github.com/mcpx-dev/mcpx/service"
)

// On a terminal, call follows a task itself and shows its status on stderr.
func TestCallShowsTaskStatusOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture and runs a task through a daemon (-short)")
	}
	e := newEnv(t)
	fixtureBin, err := testkit.Build(t.TempDir(), testkit.Fixture)
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers": {"fx": {"command": "` + fixtureBin + `"}}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := e.run("trust", filepath.Join(e.dir, ".mcp.json")); code != 0 {
		t.Fatalf("trust: %d %s", code, errs)
	}
	if code, _, errs := e.run("refresh"); code != 0 {
		t.Fatalf("refresh: %d %s", code, errs)
	}
	var out, errb bytes.Buffer
	a := &App{
		Stdin:    strings.NewReader(""),
		Stdout:   &out,
		Stderr:   &errb,
		Getenv:   func(k string) string { return e.vars[k] },
		Terminal: true,
		Detect: func(_ context.Context, _ config.Getenv, paths config.Paths, _ string) (service.Manager, string, error) {
			return service.NewDirect(paths, e.bin), "", nil
		},
	}
	code := a.Run(context.Background(), []string{"mcpx", "-C", e.dir, "call", "fx.task_sleep", "seconds=1.5"})
	if code != 0 || out.String() != "slept 1.5 seconds" {
		t.Fatalf("call: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	errs := errb.String()
	if !strings.Contains(errs, "of fx.task_sleep working") || !strings.Contains(errs, "of fx.task_sleep completed") {
		t.Errorf("status lines on stderr: %q", errs)
	}
}
