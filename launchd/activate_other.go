//go:build !darwin

package launchd

import (
	"fmt"
	"net"
)

// ActivateSocket returns the listeners launchd holds for the agent's
// Sockets entry name. Off darwin there is no launchd: it always returns an
// error wrapping ErrNotActivated.
func ActivateSocket(name string) ([]net.Listener, error) {
	return nil, fmt.Errorf("launchd socket %q: %w (launchd exists only on macOS)", name, ErrNotActivated)
}
