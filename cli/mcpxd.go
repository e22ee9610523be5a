package cli

import (
	"fmt"
	"os"
	"syscall"

	"github.com/mcpx-dev/mcpx/internal/mcpxd"
)

// execDaemonBinary replaces this process with `mcpxd name args…`: the
// commands that need an MCP library (daemon, demo-server, serve) live in
// mcpxd, found beside this executable, then on PATH. It returns only on
// failure (exit 3; a missing mcpxd names both places looked at).
func execDaemonBinary(name string, args []string) error {
	self, err := mcpxd.Executable()
	if err != nil {
		return &exitError{code: ExitUnavailable, kind: codeUnavailable, msg: "mcpx: " + err.Error()}
	}
	bin, err := mcpxd.Find(self)
	if err != nil {
		return &exitError{code: ExitUnavailable, kind: codeUnavailable, msg: "mcpx: " + sentence(err.Error())}
	}
	argv := append([]string{bin, name}, args...)
	err = syscall.Exec(bin, argv, os.Environ())
	return &exitError{code: ExitUnavailable, kind: codeUnavailable, msg: fmt.Sprintf("mcpx: run %s: %v", bin, err)}
}
