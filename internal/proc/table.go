package proc

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// Entry is one process of the process table: what the orphan reaper needs
// to tell a member of a recorded process group from a stranger that got a
// recycled number.
type Entry struct {
	PID  int
	Pgid int
	Sid  int
	// Start is the start time as StartTime reports it.
	Start uint64
}

// ErrNoTable is a system whose processes List cannot enumerate.
var ErrNoTable = errors.New("cannot list the processes of this system")

// List returns the processes of the system: from /proc on Linux, from
// sysctl kern.proc.all on macOS. A process that exits meanwhile may be
// missing; an error means the table could not be read at all, so a caller
// must not conclude that a process is gone.
func List() ([]Entry, error) { return list() }

// parseStat reads the process group, session and start time from the
// content of /proc/<pid>/stat: "pid (comm) state ppid pgrp session … "
// with starttime the 22nd field; comm may hold spaces and parentheses, so
// the fields are counted from the last ')'.
func parseStat(b []byte) (pgrp, sid int, start uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, 0, 0, false
	}
	pgrp, e1 := strconv.Atoi(f[2])
	sid, e2 := strconv.Atoi(f[3])
	start, e3 := strconv.ParseUint(f[19], 10, 64)
	return pgrp, sid, start, e1 == nil && e2 == nil && e3 == nil
}
