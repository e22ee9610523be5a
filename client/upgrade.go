package client

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/version"
)

// Upgrades. Every answer of the daemon names its executable's build
// (api.HeaderBinary: path, size, modification time). When the daemon runs
// the mcpxd this client would start (same path) but another build of it,
// an upgrade was installed over it: as soon as the command's answer starts,
// the client asks it to step down (POST /v1/shutdown naming that build,
// without activating anything). A daemon started from another path (units
// naming another installation) is left alone: replacing it would only
// start the same binary again; `mcpx doctor` reports it.
//
// The old daemon hands its listening socket to the new build (systemd and
// direct managers; daemon/handoff.go), so new commands reach the new build
// at once, and finishes every request it accepted, each call within its own
// callTimeout. Under launchd it drains and exits, and launchd starts the
// new build on the next connection. No call fails: requests the old daemon
// accepted are served, and the ones it never read are sent again on a
// fresh connection.

type upgradeState struct {
	once  sync.Once
	mine  string      // version.BinaryID(self), read once
	asked atomic.Bool // a drain was requested by this client
}

// checkBuild compares the daemon's build with this client's mcpxd and asks
// a differing daemon to drain and exit, at most once per client.
func (c *Client) checkBuild(ctx context.Context, theirs string) {
	if theirs == "" || c.self == "" || c.upgrade.asked.Load() {
		return
	}
	c.upgrade.once.Do(func() { c.upgrade.mine = version.BinaryID(c.self) })
	mine := c.upgrade.mine
	if mine == "" || mine == theirs || version.BinaryPath(mine) != version.BinaryPath(theirs) ||
		!c.upgrade.asked.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Naming the build to replace: the answer that showed it may come from
	// a daemon that has already handed its socket to a successor, which
	// must not stop too. Best effort: a daemon already going is fine.
	_ = c.Shutdown(ctx, theirs)
}

// ReplacedStale reports whether this client asked a daemon of another build
// to drain and exit.
func (c *Client) ReplacedStale() bool { return c.upgrade.asked.Load() }
