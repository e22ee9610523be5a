package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// many processes it signalled. When the process table cannot be read, it
// returns the error and moves the records to path+".unreaped" (the caller's
// own children will be recorded in path), where the next call finds them
// again: a record is never dropped unchecked.
func ReapOrphans(path string) (int, error) {
	pending := path + ".unreaped"
	var recs []childRecord
	for _, p := range []string{pending, path} {
		data, err := owner.ReadFile(p, 1<<20)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var c childRecord
			if json.Unmarshal(line, &c) == nil && c.Pgid > 1 && (c.Sid > 0 || c.Start > 0) {
				recs = append(recs, c)
			}
		}
	}
	killed := 0
	if len(recs) > 0 {
		procs, err := listProcs()
		if err != nil {
			err = fmt.Errorf("reap the servers recorded in %s: %w", path, err)
			var b bytes.Buffer
			for _, c := range recs {
				line, _ := json.Marshal(c)
				b.Write(append(line, '\n'))
			}
			if werr := os.WriteFile(pending, b.Bytes(), 0o600); werr != nil {
				return 0, errors.Join(err, werr) // path stays, with the records
			}
			os.Remove(path)
			return 0, err
		}
		for _, pid := range orphans(recs, procs, os.Getpid()) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	os.Remove(pending)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return killed, err
	}
	return killed, nil
}

// listProcs reads the process table (a seam for tests).
var listProcs = osproc.List

// orphans returns the pids of procs that belong to a recorded group: the
// same process group and session, started no earlier than the group's
// leader (a record without a session, from a PID namespace whose session
// leader is outside, is matched by group and start time alone). self is
// never one.
func orphans(recs []childRecord, procs []osproc.Entry, self int) []int {
	var pids []int
	for _, p := range procs {
		if p.PID == self || p.PID <= 1 {
			continue
		}
		for _, c := range recs {
			if p.Pgid == c.Pgid && p.Sid == c.Sid && (c.Start == 0 || p.Start >= c.Start) {
				pids = append(pids, p.PID)
				break
			}
		}
	}
	return pids
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
