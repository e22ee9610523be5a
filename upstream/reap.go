package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mcpx-dev/mcpx/internal/owner"
	osproc "github.com/mcpx-dev/mcpx/internal/proc"
)

// Orphans. A stdio server runs in its own process group; the daemon records
// every group it started in Options.ChildrenFile (in the runtime directory)
// and removes it when the group is stopped. A daemon that dies without
// stopping its servers (kill -9, OOM) leaves the file behind: the parent
// death signal (pdeathsig_linux.go) ends each group's leader, and the next
// daemon for the key calls ReapOrphans to end whatever is left (a
// grandchild that inherited the group, or every member where there is no
// parent death signal).

// childRecord identifies one process group: its leader's pid (= pgid), the
// leader's start time and the session it was started in (the daemon's). A
// process belongs to the group only if all three fit, so a reused pgid is
// never taken for ours. Sid is 0 when the session's leader lies outside
// our PID namespace (a container started by a runtime); the start time
// then has to identify the group on its own, so such a record needs one.
type childRecord struct {
	Pgid  int    `json:"pgid"`
	Start uint64 `json:"start"`
	Sid   int    `json:"sid"`
}

// noteChild records (live) or forgets the group led by pid and rewrites
// the children file. Safe for concurrent use.
func (p *Pools) noteChild(pid int, live bool) {
	if p.opts.ChildrenFile == "" {
		return
	}
	p.childMu.Lock()
	defer p.childMu.Unlock()
	path := p.opts.ChildrenFile
	if p.childMoved != "" {
		path = p.childMoved
	}
	if p.children == nil {
		p.children = map[int]childRecord{}
	}
	if live {
		sid, _ := unix.Getsid(pid)
		p.children[pid] = childRecord{Pgid: pid, Start: osproc.StartTime(pid), Sid: sid}
	} else {
		delete(p.children, pid)
	}
	var b bytes.Buffer
	for _, c := range p.children {
		line, _ := json.Marshal(c)
		b.Write(append(line, '\n'))
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err == nil {
		if err := os.Rename(tmp, path); err != nil {
			p.logf("upstream: record children: %v", err)
		}
	} else {
		p.logf("upstream: record children: %v", err)
	}
}

// ReapOrphans SIGKILLs every process still in a group recorded in path by
// a daemon that died, then removes the file. Call it only while no other
// daemon for the key runs (the daemon holds its alive lock). It returns how
// many processes it signalled.
func ReapOrphans(path string) (int, error) {
	data, err := owner.ReadFile(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var recs []childRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		var c childRecord
		if json.Unmarshal(line, &c) == nil && c.Pgid > 1 && (c.Sid > 0 || c.Start > 0) {
			recs = append(recs, c)
		}
	}
	killed := 0
	if len(recs) > 0 {
		ents, _ := os.ReadDir("/proc")
		for _, ent := range ents {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			pgrp, sid, start, ok := statIDs(pid)
			if !ok {
				continue
			}
			for _, c := range recs {
				if pgrp == c.Pgid && sid == c.Sid && (c.Start == 0 || start >= c.Start) {
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						killed++
					}
					break
				}
			}
		}
	}
	return killed, os.Remove(path)
}

// statIDs reads the process group, session and start time of pid from
// /proc/<pid>/stat.
func statIDs(pid int) (pgrp, sid int, start uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
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

// A daemon that hands its socket to a successor (daemon/handoff.go) runs on
// for a while with servers of its own: it records them in a file of its own
// (RetiredChildren), so the successor's ReapOrphans does not end them, and
// the next daemon to start reaps that file's groups if their daemon died
// before stopping them (ReapRetired).

// RetiredChildren is where a daemon with pid (started at start, in clock
// ticks) records its servers once it has handed its socket over; path is
// the key's children file.
func RetiredChildren(path string, pid int, start uint64) string {
	return fmt.Sprintf("%s.retired-%d-%d", path, pid, start)
}

// MoveChildren moves the children file to path (an empty path: back to
// Options.ChildrenFile) and records there from now on.
func (p *Pools) MoveChildren(path string) error {
	if p.opts.ChildrenFile == "" {
		return nil
	}
	p.childMu.Lock()
	defer p.childMu.Unlock()
	from, to := p.opts.ChildrenFile, path
	if p.childMoved != "" {
		from = p.childMoved
	}
	if to == "" {
		to = p.opts.ChildrenFile
	}
	if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("move the record of running servers: %w", err)
	}
	p.childMoved = path
	return nil
}

// ChildrenFile is where the running servers are recorded now.
func (p *Pools) ChildrenFile() string {
	p.childMu.Lock()
	defer p.childMu.Unlock()
	if p.childMoved != "" {
		return p.childMoved
	}
	return p.opts.ChildrenFile
}

// ReapRetired reaps (ReapOrphans) the groups recorded by daemons that
// handed the socket of path's key over and then died without stopping
// their servers; the files of such daemons still running are left alone.
// It returns how many processes it signalled.
func ReapRetired(path string) (int, error) {
	matches, err := filepath.Glob(path + ".retired-*")
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, m := range matches {
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(strings.TrimPrefix(m, path+".retired-"), "%d-%d", &pid, &start); err != nil {
			continue
		}
		if start != 0 && osproc.StartTime(pid) == start {
			continue // still finishing its calls
		}
		n, err := ReapOrphans(m)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}
