// Package testkit is what the test suites of several packages share:
// building a command of this module, waiting for a condition without
// asserting a time, a buffer that one goroutine may read while another
// writes it, and JSON objects written inline. Only tests (and test helpers such as systemdtest) import it.
package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fixture is the import path of the test MCP server's command.
const Fixture = "github.com/mcpx-dev/mcpx/internal/fixture/cmd/mcpx-fixture"

// Build builds the command pkg (an import path of this module) into dir
// and returns the binary's path, named after the package's last element.
func Build(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, path.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// BuildBinaries builds both mcpx binaries, the CLI (cmd/mcpx) and the
// daemon (cmd/mcpxd), into dir, where mcpx finds mcpxd, and returns the
// CLI's path. They are built as the README builds them, with
// CGO_ENABLED=0 (static binaries start faster). ldflags, when given, are
// passed to the linker (e.g. "-X
// github.com/mcpx-dev/mcpx/internal/version.Version=v1").
func BuildBinaries(dir string, ldflags ...string) (string, error) {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(ldflags, " "))
	}
	args = append(args, "github.com/mcpx-dev/mcpx/cmd/mcpx", "github.com/mcpx-dev/mcpx/cmd/mcpxd")
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("CGO_ENABLED=0 go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, "mcpx"), nil
}

// Eventually polls cond until it holds, failing t when within passes
// first. The deadline only bounds a hung test; nothing asserts a time.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SyncBuffer is a bytes.Buffer safe to read while another goroutine (an
// exec.Cmd copying a child's output, a logger) writes it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Object decodes s, a JSON object a test writes inline.
func Object(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
