//go:build !linux

package proc

import "syscall"

func signal(pid int, start uint64, sig syscall.Signal, args []string) error {
	return killChecked(pid, start, sig, args)
}
