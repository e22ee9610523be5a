//go:build !linux && !darwin

package cli

import (
	"errors"
	"os"
)

// noEcho is not available here: the answer is echoed.
func noEcho(*os.File) (func(), error) { return nil, errors.New("no terminal control on this platform") }
