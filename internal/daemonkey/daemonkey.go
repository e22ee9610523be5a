// Package daemonkey checks a daemon key before a service manager sees it.
// systemd puts the key into unit instance names (mcpx@KEY.socket) and
// launchd into labels and plist file names, so a key must be a safe name
// for both: a key that is not could name another unit or a path outside
// the agents directory. Keys mcpx computes (config.KeyOf) always pass;
// the check guards keys read back from unit names, plists and flags.
package daemonkey

import (
	"errors"
	"fmt"
)

// ErrInvalid is a key that is not 1-64 of [A-Za-z0-9_-].
var ErrInvalid = errors.New("invalid daemon key")

// Check reports whether key can name a unit instance or a launchd label,
// wrapping ErrInvalid when it cannot.
func Check(key string) error {
	if !Valid(key) {
		return fmt.Errorf("%w %q: want 1-64 of [A-Za-z0-9_-]", ErrInvalid, key)
	}
	return nil
}

// Valid reports whether key is 1-64 of [A-Za-z0-9_-].
func Valid(key string) bool {
	if len(key) == 0 || len(key) > 64 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
