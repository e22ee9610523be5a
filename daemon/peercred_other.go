//go:build !linux && !darwin

package daemon

import "errors"

// fdPeerUID cannot check credentials here, so every connection is refused.
func fdPeerUID(int) (int, error) {
	return -1, errors.New("peer credentials are not supported on this platform")
}
