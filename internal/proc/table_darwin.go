package proc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// list reads the process table with sysctl kern.proc.all (what ps(1)
// does): each process's group from its kinfo_proc, its session from
// getsid(2) (which xnu answers for any pid), its start time as startTimeOS
// computes it.
func list() ([]Entry, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("%w: sysctl kern.proc.all: %w", ErrNoTable, err)
	}
	out := make([]Entry, 0, len(kps))
	for i := range kps {
		kp := &kps[i]
		pid := int(kp.Proc.P_pid)
		if pid <= 0 {
			continue
		}
		sid, err := unix.Getsid(pid)
		if err != nil {
			continue // exited meanwhile
		}
		out = append(out, Entry{PID: pid, Pgid: int(kp.Eproc.Pgid), Sid: sid, Start: startOf(kp)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: sysctl kern.proc.all lists no process", ErrNoTable)
	}
	return out, nil
}

// startOf is a process's start time in microseconds since the epoch
// (p_starttime): like Linux's clock ticks after boot, it is the same for
// the life of the process and later for a process that reuses its pid.
func startOf(kp *unix.KinfoProc) uint64 {
	tv := kp.Proc.P_starttime
	return uint64(tv.Sec)*1e6 + uint64(tv.Usec)
}

// startTimeOS is StartTime from sysctl kern.proc.pid.<pid>, 0 when the
// process is gone.
func startTimeOS(pid int) uint64 {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp == nil || int(kp.Proc.P_pid) != pid {
		return 0
	}
	return startOf(kp)
}
