package api

// The direct manager's hand-off to the daemon it spawns (docs/architecture.md,
// "The direct manager"). The client binds the socket itself, under its lock,
// and passes the listening socket the way systemd does: fd 3, LISTEN_FDS=1,
// LISTEN_FDNAMES=mcpx. It cannot know the child's pid before the child
// exists, so instead of LISTEN_PID it sets EnvListenInherited=1, which tells
// mcpxd that LISTEN_FDS is meant for it; mcpxd then takes the socket through
// the same code path as a systemd-activated one. A pipe on fd 4
// (EnvReadyFD=4) carries "READY=1\n" once the daemon serves, so the client
// can tell a daemon that died or hung at start from one that is slow.
//
// A daemon handing its socket to a newer build (daemon/handoff.go) starts
// it the same way, adding EnvListenManager (systemd or direct): the
// manager the successor then runs under.
const (
	EnvListenInherited = "MCPX_LISTEN_INHERITED"
	EnvReadyFD         = "MCPX_READY_FD"
	EnvListenManager   = "MCPX_LISTEN_MANAGER"
)
