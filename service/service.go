// Package service chooses and drives the service manager that owns the
// daemon: systemd (package units), launchd (package launchd) or the direct
// manager here, which spawns the daemon itself under a file lock.
package service

import (
	"context"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Manager names.
const (
	NameSystemd = "systemd"
	NameLaunchd = "launchd"
	NameDirect  = "direct"
)

// Socket states.
const (
	SocketListening = "listening" // the manager (or a daemon) holds the socket
	SocketAbsent    = "absent"
)

// Service states.
const (
	ServiceRunning      = "running"
	ServiceIdle         = "idle"          // installed, socket may listen, no process
	ServiceFailed       = "failed"        // last run failed; LastExit says how
	ServiceNotInstalled = "not-installed" // no unit/agent for this key
	ServiceStale        = "stale"         // an info file whose process is gone (direct)
)

// State is what a manager knows about one key, learned without connecting to
// the daemon's socket.
type State struct {
	Key     config.DaemonKey `json:"daemonKey"`
	Manager string           `json:"manager"`
	// Units are the unit names (systemd) or the agent label (launchd).
	Units   []string  `json:"units,omitempty"`
	Socket  string    `json:"socket"`  // SocketListening | SocketAbsent
	Service string    `json:"service"` // Service* constants
	PID     int       `json:"pid,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	// LastExit describes the last failure ("exit-code 2", "signal KILL").
	LastExit string `json:"lastExit,omitempty"`
	// Detail is the manager's raw words (systemd ActiveState/SubState,...).
	Detail map[string]string `json:"detail,omitempty"`
}

// Serving reports whether a daemon process is up and staying up, so that
// connecting to the socket reaches it and cannot activate another one.
// A systemd service that is still deactivating is not serving: a connection
// queued now would make systemd start the service again once it stops.
// (Between State and a connection the daemon may still exit; callers that
// must never activate keep that window to one request.)
func (s State) Serving() bool {
	if s.Service != ServiceRunning {
		return false
	}
	if as, ok := s.Detail["serviceActiveState"]; ok {
		return as == "active"
	}
	return true
}

// Manager is one way of owning daemons. Implementations must be safe for use
// by one CLI invocation at a time (they are not shared across goroutines).
type Manager interface {
	// Name is NameSystemd, NameLaunchd or NameDirect.
	Name() string
	// Installed reports whether the unit templates / agents are in place
	// (always true for direct).
	Installed() (bool, error)
	// Install writes the templates and reloads the manager; idempotent.
	Install() error
	// Uninstall stops every instance and removes the templates; idempotent.
	Uninstall() error
	// Ensure makes the socket for key exist, cheaply and idempotently.
	// After it returns, connecting to the socket reaches a daemon (or
	// activates one).
	Ensure(ctx context.Context, key config.DaemonKey) error
	// State reports the key's state. It never connects to the socket.
	State(ctx context.Context, key config.DaemonKey) (State, error)
	// Stop stops the daemon; with socket also the socket (systemd/launchd).
	Stop(ctx context.Context, key config.DaemonKey, socket bool) error
	// List reports every key the manager knows about.
	List(ctx context.Context) ([]State, error)
}
