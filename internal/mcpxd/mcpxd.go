// Package mcpxd finds the daemon binary, mcpxd, from the CLI's side. mcpx
// links no MCP library; everything that needs one (the daemon, the built-in
// demo server, `mcpx serve`) is mcpxd, which the CLI runs or names in unit
// files. It is looked for beside the running mcpx executable first (the
// two are built and installed together), then on PATH.
package mcpxd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Name is the daemon binary's file name.
const Name = "mcpxd"

// ErrNotFound is the kind of a missing mcpxd.
var ErrNotFound = errors.New("mcpxd not found")

// NotFoundError names both places mcpxd was looked for.
type NotFoundError struct {
	Beside string // the path beside the mcpx executable
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s is not installed: looked for %s and for %q on PATH; build or install both binaries (go build -o bin/ ./cmd/... or go install github.com/mcpx-dev/mcpx/cmd/...@latest)",
		Name, e.Beside, Name)
}

// Unwrap returns ErrNotFound.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Executable is the symlink-resolved absolute path of the running binary.
func Executable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own executable: %w", err)
	}
	if runtime.GOOS == "linux" && !strings.HasSuffix(self, " (deleted)") {
		return self, nil // /proc/self/exe names the file the kernel ran, resolved
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	return self, nil
}

// Beside is where mcpxd is expected when it is installed with self.
func Beside(self string) string { return filepath.Join(filepath.Dir(self), Name) }

// Find returns the absolute, symlink-resolved path of mcpxd for the mcpx
// binary self: beside it, else on PATH. Missing, the error is a
// *NotFoundError.
func Find(self string) (string, error) {
	beside := Beside(self)
	// self is resolved, so beside is unless it is a symlink itself: one
	// lstat answers the common case.
	if fi, err := os.Lstat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return beside, nil
	}
	if isExecutable(beside) {
		return resolve(beside), nil
	}
	if p, err := exec.LookPath(Name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return resolve(abs), nil
		}
	}
	return "", &NotFoundError{Beside: beside}
}

// Path is Find without the error: a missing mcpxd is named by the path it
// would have beside self, so the built-in config (and its identity) stays
// the same, and whatever tries to run it reports the missing file.
func Path(self string) string {
	if p, err := Find(self); err == nil {
		return p
	}
	return Beside(self)
}

func resolve(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Stable returns the path a launchd agent should name to run resolved (the
// symlink-resolved mcpxd): the unresolved path that leads to it, beside the
// running mcpx as it was invoked or on PATH, when there is one; else
// resolved. Package managers install into a versioned directory that an
// upgrade deletes (Homebrew: /opt/homebrew/Cellar/mcpx/1.2.3/bin/mcpxd)
// and link it from a stable one (/opt/homebrew/bin/mcpxd); an agent that
// names the link runs the new build after an upgrade, one that names the
// Cellar path runs nothing.
func Stable(resolved string) string {
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, Beside(exe))
	}
	if p, err := exec.LookPath(Name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			candidates = append(candidates, abs)
		}
	}
	return stableAmong(resolved, candidates)
}

// stableAmong returns the first absolute candidate that is not resolved
// itself but resolves to it, else resolved.
func stableAmong(resolved string, candidates []string) string {
	for _, c := range candidates {
		c = filepath.Clean(c)
		if c == resolved || !filepath.IsAbs(c) {
			continue
		}
		if real, err := filepath.EvalSymlinks(c); err == nil && real == resolved {
			return c
		}
	}
	return resolved
}
