// Package daemon is the service process: it takes the inherited listener
// (systemd/launchd) or binds one, serves the HTTP API of DESIGN.md §6 over the
// unix socket, keeps the server registry and the schema cache, and exits when
// idle.
package daemon

// PENDING: declared signatures (deleted once implemented by the daemon
// engineer). cmd/mcpx wires Main into the CLI's `daemon --key K` command.

import (
	"context"
	"net"

	"github.com/mcpx-dev/mcpx/config"
)

// Main runs the daemon for key until it exits (idle exit, SIGTERM,
// /v1/shutdown). It reads the key record, loads the config, takes the
// inherited listener named "mcpx" or binds the socket, and calls Run.
// A configuration error is returned as an error for which ExitCode reports 2.
func Main(ctx context.Context, key config.DaemonKey) error { panic("pending") }

// Options configure Run. Tests build them directly.
type Options struct {
	Key     config.DaemonKey
	Config  *config.Config
	Paths   config.Paths
	Manager string // "systemd", "launchd" or "direct"
	Self    string // absolute path of the mcpx binary
}

// Run serves on ln until ctx is done or the daemon decides to exit.
func Run(ctx context.Context, ln net.Listener, opts Options) error { panic("pending") }

// ExitCode maps an error returned by Main to a process exit status
// (0 for nil, 2 for configuration errors, 1 otherwise).
func ExitCode(err error) int { panic("pending") }
