//go:build !linux && !darwin

package cache

import (
	"os"
	"time"
)

// birthTime falls back to the modification time where the OS has no
// portable creation time.
func birthTime(_ string, fi os.FileInfo) time.Time { return fi.ModTime() }
