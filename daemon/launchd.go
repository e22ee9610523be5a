package daemon

import (
	"errors"
	"fmt"
	"net"

	"github.com/mcpx-dev/mcpx/launchd"
)

// activateLaunchd takes the socket launchd holds for the agent (Sockets →
// "mcpx"); nil when the daemon was not started by launchd (always, off
// darwin).
func activateLaunchd() (net.Listener, error) {
	lns, err := launchd.ActivateSocket("mcpx")
	if errors.Is(err, launchd.ErrNotActivated) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take launchd socket: %w", err)
	}
	if len(lns) == 0 {
		return nil, nil
	}
	for _, extra := range lns[1:] {
		extra.Close()
	}
	return lns[0], nil
}
