package upstream

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the process pid, a child not yet reaped, has
// exited, without holding an OS thread meanwhile: its pidfd becomes
// readable then, and the runtime's poller waits for that as for a pipe.
// (exec.Cmd.Wait blocks in waitid, which keeps a thread in the kernel per
// server: a daemon with 500 live servers had 524 threads.) The caller
// reaps it afterwards, which then does not block. Where pidfds cannot be
// polled (Linux before 5.3), it returns at once and the caller's Wait
// blocks as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err == unix.EINVAL { // Linux 5.3 to 5.9: no flags, but pollable
		if fd, err = unix.PidfdOpen(pid, 0); err == nil {
			err = unix.SetNonblock(fd, true)
		}
	}
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Each call asks the pidfd itself whether the process has exited: the
	// poller reports a readable fd once (edge-triggered), and a report
	// that came before this wait began (a child that exited at once) is
	// cleared when the wait starts, so only the fd can tell.
	_ = rc.Read(func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		return err != nil || n > 0 // exited, or cannot tell: the caller's Wait blocks
	})
}
