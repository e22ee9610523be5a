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
	polled := false
	// The first call asks the poller to wait for the pidfd to be
	// readable (it is at once if the process has already exited); the
	// second ends the wait.
	_ = rc.Read(func(uintptr) bool {
		done := polled
		polled = true
		return done
	})
}
