package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// GCReport says what a GC did.
type GCReport struct {
	Removed     []Entry `json:"removed"`
	FreedBytes  int64   `json:"freedBytes"`
	Kept        int     `json:"kept"`
	KeptBytes   int64   `json:"keptBytes"`
	TempRemoved int     `json:"tempRemoved"`
	// LeasesRemoved counts lease files of expired leases or dead holders.
	LeasesRemoved int `json:"leasesRemoved"`
}

// GC applies p (see collect for the exact guarantee): it removes leftover
// temp files and dead leases, then entries older than p.MaxAge, then the
// least-recently-used unreferenced entries until the total fits p.MaxBytes.
// Leased entries and entries used within Grace are never removed. It runs
// under an exclusive flock on <dir>/gc.lock, so two GCs (of any processes)
// take turns and a concurrent Put or Lease is seen whole or not at all.
func (s *Store) GC(p Policy) (GCReport, error) {
	var rep GCReport
	lk := flock.New(s.lockPath())
	if err := lk.Lock(); err != nil {
		return rep, fmt.Errorf("gc cache store %s: lock: %w", s.dir, err)
	}
	defer lk.Close()

	rep.TempRemoved = s.sweepTemp()
	before := countDir(s.leaseDir())
	entries, err := s.index(false, true)
	if err != nil {
		return rep, fmt.Errorf("gc cache store %s: %w", s.dir, err)
	}
	if after := countDir(s.leaseDir()); before > after {
		rep.LeasesRemoved = before - after
	}
	drop := collect(entries, p, s.now(), s.Grace)
	gone := make([]bool, len(entries))
	for _, i := range drop {
		e := entries[i]
		err := os.Remove(s.Path(e.Digest))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("gc cache entry %s: %w", e.Digest.Short(), err)
		}
		gone[i] = true
		rep.Removed = append(rep.Removed, e)
		rep.FreedBytes += e.Size
	}
	for i, e := range entries {
		if !gone[i] {
			rep.Kept++
			rep.KeptBytes += e.Size
		}
	}
	return rep, nil
}

// GCEvery runs GC unless one ran less than every ago (any process: the
// time is kept in <dir>/gc.stamp, Go build cache style). It reports whether
// it ran.
func (s *Store) GCEvery(p Policy, every time.Duration) (GCReport, bool, error) {
	stamp := filepath.Join(s.dir, "gc.stamp")
	now := s.now()
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < every && !fi.ModTime().After(now) {
		return GCReport{}, false, nil
	}
	rep, err := s.GC(p)
	if err != nil {
		return rep, true, err
	}
	if f, err := os.Create(stamp); err == nil {
		_ = f.Close()
		_ = os.Chtimes(stamp, now, now)
	}
	return rep, true, nil
}

func countDir(dir string) int {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	return len(des)
}
