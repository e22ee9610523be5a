package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// initLine is a line of GODEBUG=inittrace=1: the package, then what its
// init allocated.
var initLine = regexp.MustCompile(`^init (\S+) @.* (\d+) bytes, (\d+) allocs$`)

// No package of ours allocates at init: whatever a package builds there
// (a map, a sync.OnceValue's closures, a list appended to) every mcpx
// process pays for in page faults, `mcpx version` included. Values computed
// on first use are internal/lazy's; docs/performance.md, "Page faults
// before main".
func TestOurInitsAllocateNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcpx")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpx version: %v\n%s", err, stderr.String())
	}
	ours := 0
	for line := range strings.Lines(stderr.String()) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || !strings.HasPrefix(m[1], "github.com/mcpx-dev/mcpx") {
			continue
		}
		ours++
		if m[3] != "0" {
			t.Errorf("%s allocates %s bytes in %s allocations at init", m[1], m[2], m[3])
		}
	}
	if ours == 0 {
		t.Fatalf("no init of ours in the trace; GODEBUG=inittrace=1 printed:\n%s", stderr.String())
	}
}
