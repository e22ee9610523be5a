package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/service"
)

// runWith runs the line as mcpx would, with or without lean lines.
func (e *env) runWith(lean bool, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	a := &App{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return e.vars[k] },
		Detect: func(_ context.Context, _ config.Getenv, paths config.Paths, _ string) (service.Manager, string, error) {
			return service.NewDirect(paths, filepath.Join(filepath.Dir(e.bin), "mcpxd")), "", nil
		},
		noLean: !lean,
	}
	code = a.Run(context.Background(), append([]string{"mcpx"}, args...))
	return code, out.String(), errb.String()
}

// A lean line (lean.go) gives what urfave/cli gives for the same line:
// the same exit code, stdout and stderr, errors included.
func TestLeanLinesMatchUrfave(t *testing.T) {
	e := newEnv(t)
	C := []string{"-C", e.dir}
	lines := [][]string{
		{"call", "demo.echo", "text=hello"},
		{"call", "demo.add", "a=2", "b=40"},
		{"--json", "call", "demo.echo", "text=x"},
		{"call", "demo.echo", "text=x", "--json"},
		{"call", "demo.echo", `{"text":"j"}`},
		{"call", "demo.ech", "text=x"},
		{"call", "demo.echo", "[1]"},
		{"call", "demo.delete_note", "name=x"},
		{"call"},
		{"call", "help"},
		{"call", "demo"},
		{"ls"},
		{"ls", "demo"},
		{"--json", "ls"},
		{"ls", "demo", "--json"},
		{"ls", "a", "b"},
		{"ls", "nowhere"},
		{"search", "echo"},
		{"search"},
		{"--json", "search", "add", "numbers"},
		{"schema", "demo.echo"},
		{"schema", "demo"},
		{"schema"},
		{"--json", "schema", "demo.add"},
		{"version"},
		{"--json", "version"},
	}
	for _, line := range lines {
		for _, args := range [][]string{append(append([]string{}, C...), line...), append(append([]string{}, line...), "--directory="+e.dir)} {
			if _, _, ok := (&App{}).parseLean(append([]string{"mcpx"}, args...)); !ok {
				t.Fatalf("mcpx %q is not a lean line", args)
			}
			lc, lo, le := e.runWith(true, args...)
			uc, uo, ue := e.runWith(false, args...)
			if lc != uc || lo != uo || le != ue {
				t.Errorf("mcpx %q:\nlean:    exit %d, stdout %q, stderr %q\nurfave:  exit %d, stdout %q, stderr %q", args, lc, lo, le, uc, uo, ue)
			}
		}
	}
}

// Lines with anything lean lines do not know go to urfave/cli.
func TestLeanLinesAreOnlyTheSimpleOnes(t *testing.T) {
	a := &App{}
	for _, args := range [][]string{
		{"mcpx", "call", "demo.echo", "--yes", "text=x"},
		{"mcpx", "call", "demo.echo", "-"},
		{"mcpx", "call", "demo.echo", "--", "text=x"},
		{"mcpx", "call", "demo.echo", "--help"},
		{"mcpx", "--json", "--json", "ls"},
		{"mcpx", "-C", "a", "-C", "b", "ls"},
		{"mcpx", "ls", "-C"},
		{"mcpx", "ls", "-C", "-x"},
		{"mcpx", "--json=true", "ls"},
		{"mcpx", "search", "--limit", "3", "x"},
		{"mcpx", "status"},
		{"mcpx", "help", "call"},
		{"mcpx"},
	} {
		if _, _, ok := a.parseLean(args); ok {
			t.Errorf("%q ran as a lean line", args)
		}
	}
}
