package proc

import (
	"fmt"
	"os"
	"strconv"
)

func list() ([]Entry, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTable, err)
	}
	var out []Entry
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if pgrp, sid, start, ok := parseStat(b); ok {
			out = append(out, Entry{PID: pid, Pgid: pgrp, Sid: sid, Start: start})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: /proc lists no process", ErrNoTable)
	}
	return out, nil
}

// startTimeOS is StartTime without /proc: none on Linux.
func startTimeOS(int) uint64 { return 0 }
