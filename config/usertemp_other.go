//go:build !darwin

package config

import "errors"

// userTempDir is the per-user temporary directory of macOS; other systems
// have none (their runtime directory is XDG_RUNTIME_DIR, else $TMPDIR).
func userTempDir() (string, error) {
	return "", errors.New("no per-user temporary directory outside macOS")
}
