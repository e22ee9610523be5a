package proc

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

func signal(pid int, start uint64, sig syscall.Signal, args []string) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
			return killChecked(pid, start, sig, args)
		}
		return err // ESRCH: gone
	}
	defer unix.Close(fd)
	// The pidfd pins this process: if it is ours now, the signal below
	// reaches it and nothing else, even if it exits in between.
	if !Is(pid, start, args...) {
		return syscall.ESRCH
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}
