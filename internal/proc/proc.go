// Package proc answers one question the daemon, the CLI and the cache all
// ask about a pid they read from a file: is that process still running?
package proc

import (
	"errors"
	"syscall"
)

// Alive reports whether pid names a running process: kill(pid, 0) finds it
// (EPERM means it exists but is not ours) and, where /proc shows it, it is
// not a zombie. An exited process stays a zombie until its parent (for a
// detached daemon, the init process, which may reap late) collects it, and
// a zombie serves nothing, holds no lock and never cleans up after itself.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether pid is a zombie (see state).
func zombie(pid int) bool { return state(pid) == 'Z' }

// Stopped reports whether pid is stopped (SIGSTOP, SIGTSTP, or held by a
// debugger): it runs nothing until it is continued. Where /proc does not
// say (not Linux), it reports false.
func Stopped(pid int) bool {
	s := state(pid)
	return s == 'T' || s == 't'
}

// state reads the state field of /proc/<pid>/stat (Linux): 'R', 'S', 'T',
// 'Z', ...; 0 elsewhere, or when it cannot be read.
func state(pid int) byte {
	f, err := statFields(pid)
	if err != nil || len(f) == 0 {
		return 0
	}
	return f[0][0]
}
