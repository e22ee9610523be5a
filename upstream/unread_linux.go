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

// noReader reports whether the read end of the pipe whose write end is f
// is closed everywhere: poll reports POLLERR on a pipe's write end exactly
// then. False when it cannot be told.
func noReader(f *os.File) bool {
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	if err := raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			gone = fds[0].Revents&unix.POLLERR != 0
		}
	}); err != nil {
		return false
	}
	return gone
}
