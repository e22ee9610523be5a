package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
)

// Leases are files <dir>/leases/<digest>.<pid>.<random> holding an expiry
// time (RFC 3339, or empty for none), so they pin entries across processes.
// A lease counts while its expiry has not passed and its holder process is
// alive (proc.Alive); a crashed holder's leases stop counting at once and
// GC removes their files. Lease files appear by rename, so a reader never
// sees half of one.

// Lease is a held pin. Safe for concurrent use.
type Lease struct {
	Digest Digest
	// Expires is when the lease stops counting; zero for never (until
	// Release or the end of this process).
	Expires time.Time

	path string
	once sync.Once
	err  error
}

// Lease pins d against GC until released or until ttl passes, across
// processes. ttl <= 0 pins until Release or until this process exits. A
// missing blob is a *MissError (ReasonNotFound): the lease is taken under
// the GC lock, so when Lease succeeds the blob is there and stays.
func (s *Store) Lease(d Digest, ttl time.Duration) (*Lease, error) {
	if !d.Valid() {
		return nil, &MissError{Digest: d, Reason: ReasonInvalidDigest}
	}
	unlock, err := s.shared()
	if err != nil {
		return nil, fmt.Errorf("lease cache entry %s: %w", d.Short(), err)
	}
	defer unlock()
	if _, err := os.Lstat(s.Path(d)); errors.Is(err, fs.ErrNotExist) {
		return nil, &MissError{Digest: d, Reason: ReasonNotFound}
	} else if err != nil {
		return nil, fmt.Errorf("lease cache entry %s: %w", d.Short(), err)
	}
	l, err := s.writeLease(d, ttl)
	if err != nil {
		return nil, fmt.Errorf("lease cache entry %s: %w", d.Short(), err)
	}
	return l, nil
}

// writeLease creates the lease file; the caller holds the shared GC lock.
func (s *Store) writeLease(d Digest, ttl time.Duration) (*Lease, error) {
	l := &Lease{Digest: d}
	var content string
	if ttl > 0 {
		l.Expires = s.now().Add(ttl)
		content = l.Expires.UTC().Format(time.RFC3339Nano)
	}
	tmp, err := s.createTemp("lease")
	if err != nil {
		return nil, err
	}
	_, err = tmp.WriteString(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.MkdirAll(s.leaseDir(), 0o700); err == nil {
			l.path = filepath.Join(s.leaseDir(), fmt.Sprintf("%s.%d.%s", d, os.Getpid(), randomHex(8)))
			err = os.Rename(tmp.Name(), l.path)
		}
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return nil, err
	}
	return l, nil
}

// Release drops the pin. Releasing twice is harmless.
func (l *Lease) Release() error {
	l.once.Do(func() {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.err = fmt.Errorf("release lease on cache entry %s: %w", l.Digest.Short(), err)
		}
	})
	return l.err
}

// liveLeases counts the leases that still count, per digest. With prune it
// removes the files of expired leases and of dead holders.
func (s *Store) liveLeases(prune bool) (map[Digest]int, error) {
	des, err := os.ReadDir(s.leaseDir())
	if errors.Is(err, fs.ErrNotExist) {
		return map[Digest]int{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cache leases %s: %w", s.leaseDir(), err)
	}
	now := s.now()
	out := map[Digest]int{}
	for _, de := range des {
		p := filepath.Join(s.leaseDir(), de.Name())
		d, pid, ok := parseLeaseName(de.Name())
		live := ok && proc.Alive(pid)
		if live {
			b, err := os.ReadFile(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				continue // released meanwhile
			case err != nil:
				// Unreadable: count it, the safe side.
			case len(b) > 0:
				exp, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
				live = perr == nil && now.Before(exp)
			}
		}
		if live {
			out[d]++
		} else if prune {
			_ = os.Remove(p)
		}
	}
	return out, nil
}

func parseLeaseName(name string) (Digest, int, bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 3 {
		return "", 0, false
	}
	d := Digest(parts[0])
	pid, err := strconv.Atoi(parts[1])
	if !d.Valid() || err != nil {
		return "", 0, false
	}
	return d, pid, true
}
