//go:build !linux && !darwin

package peercred

import "errors"

// fdUID cannot read credentials here.
func fdUID(int) (int, error) {
	return -1, errors.New("peer credentials are not supported on this platform")
}
