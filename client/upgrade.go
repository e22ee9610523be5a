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
// an upgrade was installed over it: the client asks it to drain and exit
// (POST /v1/shutdown, without activating anything) once the command's own
// request has been answered. A daemon started from another path (units
// naming another installation) is left alone: replacing it would only
// start the same binary again; `mcpx doctor` reports it. The daemon stops accepting, finishes the calls in flight and
// exits; the next command starts the new build — under systemd and launchd
// from the socket they keep holding (connections arriving meanwhile wait in
// the kernel), under the direct manager by binding the socket anew. No call
// fails: requests the old daemon accepted are served, and the ones it
// never read are sent again on a fresh connection.

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
	_ = c.Shutdown(ctx) // best effort: a daemon that is already going is fine
}

// ReplacedStale reports whether this client asked a daemon of another build
// to drain and exit.
func (c *Client) ReplacedStale() bool { return c.upgrade.asked.Load() }
