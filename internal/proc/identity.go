package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A pid read from a file names whatever process holds that number now: once
// the process that wrote the file has died, the kernel may give its pid to
// an unrelated process. Is and Signal prove identity before trusting a pid.

// StartTime returns pid's start time, or 0 where it cannot be read (no
// such process): on Linux in clock ticks after boot (field 22 of
// /proc/<pid>/stat), on macOS in microseconds since the epoch (sysctl
// kern.proc.pid). A pid and its start time together name one process for
// the life of the system: a reused pid has a later start time.
func StartTime(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	f, err := statFields(pid)
	if err != nil {
		return startTimeOS(pid)
	}
	// f starts at field 3; starttime is field 22.
	if len(f) < 20 {
		return 0
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// statFields reads /proc/<pid>/stat (Linux) and returns its fields from
// the third (the state) on: the command name before them, in
// parentheses, may hold spaces and parentheses, so they follow its last
// ')'.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

// CPUTime returns the CPU time pid has used (user and system, fields 14
// and 15 of /proc/<pid>/stat, in clock ticks of 10 ms), where /proc
// exists.
func CPUTime(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick, nil
}

// Cmdline returns pid's argument vector from /proc/<pid>/cmdline, or nil
// where it cannot be read.
func Cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Is reports whether pid is alive and is the process recorded with start
// time start, or (when start is 0 or start times cannot be read) one whose
// command line contains the consecutive arguments args. With neither a
// readable start time nor a readable command line (no /proc: macOS) it
// falls back to Alive; see docs/security.md.
func Is(pid int, start uint64, args ...string) bool {
	if !Alive(pid) {
		return false
	}
	if now := StartTime(pid); start != 0 && now != 0 {
		return now == start
	}
	if len(args) == 0 {
		return true // nothing more to compare
	}
	argv := Cmdline(pid)
	if argv == nil {
		_, err := os.Stat("/proc/self/cmdline")
		return err != nil // no /proc at all: cannot tell
	}
	return containsRun(argv, args)
}

// containsRun reports whether args appear consecutively in argv; an
// argument "--x" also matches argv's "--x=value" form when followed by
// value in args.
func containsRun(argv, args []string) bool {
	for i := range argv {
		j, k := i, 0
		for k < len(args) && j < len(argv) {
			if argv[j] == args[k] {
				j, k = j+1, k+1
				continue
			}
			if k+1 < len(args) && argv[j] == args[k]+"="+args[k+1] {
				j, k = j+1, k+2
				continue
			}
			break
		}
		if k == len(args) {
			return true
		}
	}
	return false
}

// Signal sends sig to pid only if Is(pid, start, args...) holds. Where the
// kernel has pidfds (Linux 5.3+) the check and the signal go through one
// pidfd, so the pid cannot be reused between them. It returns
// syscall.ESRCH when the process is gone or is not the one recorded.
func Signal(pid int, start uint64, sig syscall.Signal, args ...string) error {
	return signal(pid, start, sig, args)
}

// killChecked checks, then kills: a small window remains in which the pid
// could be reused (no pidfd on this system).
func killChecked(pid int, start uint64, sig syscall.Signal, args []string) error {
	if !Is(pid, start, args...) {
		return syscall.ESRCH
	}
	return syscall.Kill(pid, sig)
}
