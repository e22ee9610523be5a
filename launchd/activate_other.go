//go:build !(darwin && cgo)

package launchd

import (
	"fmt"
	"net"
)

// ActivateSocket returns the listeners launchd holds for the agent's
// Sockets entry name. This build cannot ask launchd (not darwin, or built
// without cgo): it always returns an error wrapping ErrNotActivated.
func ActivateSocket(name string) ([]net.Listener, error) {
	return nil, fmt.Errorf("launchd socket %q: %w (this build has no launch_activate_socket)", name, ErrNotActivated)
}
