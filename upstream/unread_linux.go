package upstream

import (
	"os"

	"golang.org/x/sys/unix"
)

// unread is how many bytes written to the pipe f nobody has read yet, or
// -1 when it cannot be told. FIONREAD (x/sys names it TIOCINQ on Linux)
// works on either end of a pipe.
func unread(f *os.File) int64 {
	raw, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return -1
	}
	return int64(n)
}
