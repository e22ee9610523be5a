//go:build !darwin

package daemon

import "net"

// activateLaunchd: launchd exists only on darwin.
func activateLaunchd() (net.Listener, error) { return nil, nil }
