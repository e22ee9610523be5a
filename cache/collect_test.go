package cache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// checkCollect holds collect's documented guarantee: given the index before
// and the set removed, nothing protected was removed, nothing unprotected
// is older than MaxAge, the total fits MaxBytes unless everything left is
// protected or referenced, byte eviction went oldest first and stopped as
// soon as the total fit.
func checkCollect(t *testing.T, label string, entries []Entry, removed map[Digest]bool, p Policy, now time.Time, grace time.Duration) {
	t.Helper()
	protected := func(e Entry) bool { return e.Leases > 0 || now.Sub(e.LastUse) < grace }
	var total int64
	var lastByteEvicted *Entry
	for i, e := range entries {
		aged := p.MaxAge >= 0 && now.Sub(e.LastUse) > p.MaxAge
		switch {
		case removed[e.Digest] && protected(e):
			t.Fatalf("%s: protected entry %s removed (%+v)", label, e.Digest.Short(), e)
		case !removed[e.Digest] && aged && !protected(e):
			t.Fatalf("%s: entry %s older than MaxAge kept (%+v)", label, e.Digest.Short(), e)
		case removed[e.Digest] && !aged:
			if len(e.Refs) > 0 {
				t.Fatalf("%s: referenced entry %s evicted for bytes", label, e.Digest.Short())
			}
			// collect evicts in (LastUse, Digest) order.
			if lastByteEvicted == nil || e.LastUse.After(lastByteEvicted.LastUse) ||
				e.LastUse.Equal(lastByteEvicted.LastUse) && e.Digest > lastByteEvicted.Digest {
				lastByteEvicted = &entries[i]
			}
		case !removed[e.Digest]:
			total += e.Size
		}
	}
	if p.MaxBytes >= 0 && total > p.MaxBytes {
		for _, e := range entries {
			if !removed[e.Digest] && !protected(e) && len(e.Refs) == 0 {
				t.Fatalf("%s: total %d > MaxBytes %d but evictable %s kept", label, total, p.MaxBytes, e.Digest.Short())
			}
		}
	}
	if lastByteEvicted != nil {
		if total+lastByteEvicted.Size <= p.MaxBytes {
			t.Fatalf("%s: evicted %s although the total already fit", label, lastByteEvicted.Digest.Short())
		}
		for _, e := range entries {
			if !removed[e.Digest] && !protected(e) && len(e.Refs) == 0 && e.LastUse.Before(lastByteEvicted.LastUse) {
				t.Fatalf("%s: kept %s used before evicted %s (not LRU)", label, e.Digest.Short(), lastByteEvicted.Digest.Short())
			}
		}
	}
}

// randomCase draws an index: sizes, last uses over 60 days, leases, refs,
// and a policy and grace.
func randomCase(rnd *rand.Rand, now time.Time) ([]Entry, Policy, time.Duration) {
	n := rnd.Intn(16)
	entries := make([]Entry, n)
	var total int64
	for i := range entries {
		e := &entries[i]
		e.Size = 1 + rnd.Int63n(2000)
		total += e.Size
		e.LastUse = now.Add(-time.Duration(rnd.Int63n(int64(60 * 24 * time.Hour))))
		if rnd.Intn(4) == 0 {
			e.Leases = 1
		}
		if rnd.Intn(4) == 0 {
			e.Refs = []string{"schemas/r" + strconv.Itoa(i) + ".json"}
		}
	}
	p := Policy{MaxBytes: NoLimit, MaxAge: NoLimit}
	if rnd.Intn(5) != 0 {
		p.MaxBytes = rnd.Int63n(total + 1)
	}
	if rnd.Intn(3) != 0 {
		p.MaxAge = time.Duration(rnd.Int63n(int64(45 * 24 * time.Hour)))
	}
	grace := []time.Duration{0, DefaultGrace, 3 * 24 * time.Hour}[rnd.Intn(3)]
	return entries, p, grace
}

// TestGCProperty checks the guarantee on 200 random indexes, and on real
// stores built from a quarter of them also the report and the disk.
func TestGCProperty(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dead := deadPid(t)
	for seed := int64(0); seed < 200; seed++ {
		rnd := rand.New(rand.NewSource(seed))
		entries, p, grace := randomCase(rnd, now)
		label := fmt.Sprintf("seed %d", seed)

		// Every case through the pure collector; every fourth also through
		// a real store (files, lease files, roots), which is slow on disk.
		for i := range entries {
			entries[i].Digest = digestOf([]byte(fmt.Sprint(seed, i)))
		}
		pure := map[Digest]bool{}
		for _, i := range collect(entries, p, now, grace) {
			pure[entries[i].Digest] = true
		}
		checkCollect(t, label+" (pure)", entries, pure, p, now, grace)
		if seed%4 != 0 {
			continue
		}

		s, err := OpenStore(filepath.Join(t.TempDir(), "cas"))
		if err != nil {
			t.Fatal(err)
		}
		clk := &fakeClock{t: now.Add(-61 * 24 * time.Hour)}
		s.Now = clk.Now
		s.Grace = grace
		roots, leases := fillRandomStore(t, s, rnd, entries, dead)
		s.SetRoots(func() (map[Digest][]string, error) { return roots, nil })
		clk.t = now

		rep, err := s.GC(p)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		removed := checkGCReport(t, label, s, entries, rep)
		checkCollect(t, label, entries, removed, p, now, grace)
		for _, l := range leases {
			_ = l.Release()
		}
	}
}

// fillRandomStore writes entries' blobs (random bytes of their sizes, which
// become their digests) into s, with their roots and leases: a live lease
// for an entry with Leases, else at random an expired one or a dead
// holder's, neither of which counts.
func fillRandomStore(t *testing.T, s *Store, rnd *rand.Rand, entries []Entry, dead int) (map[Digest][]string, []*Lease) {
	t.Helper()
	roots := map[Digest][]string{}
	var leases []*Lease
	for i := range entries {
		e := &entries[i]
		buf := make([]byte, e.Size)
		rnd.Read(buf)
		// Written directly (Put's fsync would dominate the test); Put
		// itself is tested elsewhere.
		e.Digest = digestOf(buf)
		writeBlob(t, s, *e, buf)
		if e.Refs != nil {
			roots[e.Digest] = e.Refs
		}
		switch {
		case e.Leases > 0:
			l, err := s.Lease(e.Digest, 200*24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, l)
		case rnd.Intn(3) == 0: // an expired lease: does not count
			if _, err := s.Lease(e.Digest, time.Hour); err != nil {
				t.Fatal(err)
			}
		case rnd.Intn(3) == 0: // a dead holder's lease: does not count
			name := fmt.Sprintf("%s.%d.%s", e.Digest, dead, "feed")
			if err := os.WriteFile(filepath.Join(s.Dir(), "leases", name), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return roots, leases
}

// checkGCReport: the report and the disk agree on what GC removed, and the
// report adds up. It returns the removed digests.
func checkGCReport(t *testing.T, label string, s *Store, entries []Entry, rep GCReport) map[Digest]bool {
	t.Helper()
	removed := map[Digest]bool{}
	var freed int64
	for _, e := range rep.Removed {
		removed[e.Digest] = true
		freed += e.Size
	}
	for _, e := range entries {
		if s.Has(e.Digest) == removed[e.Digest] {
			t.Fatalf("%s: report and disk disagree on %s", label, e.Digest.Short())
		}
	}
	if freed != rep.FreedBytes || rep.Kept+len(rep.Removed) != len(entries) {
		t.Fatalf("%s: inconsistent report %+v", label, rep)
	}
	return removed
}

// FuzzCollect checks the pure collector's guarantee on arbitrary indexes.
func FuzzCollect(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(0), uint8(0))
	f.Add(bytes.Repeat([]byte{7, 1, 200, 3, 0, 1, 9, 9}, 12), int64(500), int64(3600), uint8(1))
	f.Add(bytes.Repeat([]byte{255, 0, 1, 2, 3, 4, 5, 6}, 30), int64(-1), int64(-1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, maxBytes, maxAgeSec int64, g uint8) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var entries []Entry
		for i := 0; i+8 <= len(data) && len(entries) < 200; i += 8 {
			rec := data[i : i+8]
			e := Entry{
				Digest:  digestOf(append([]byte(strconv.Itoa(i)), rec...)),
				Size:    int64(binary.LittleEndian.Uint16(rec[0:2])),
				LastUse: now.Add(-time.Duration(binary.LittleEndian.Uint16(rec[2:4])) * time.Hour),
				Leases:  int(rec[4] % 3 / 2),
			}
			if rec[5]%3 == 0 {
				e.Refs = []string{"r"}
			}
			entries = append(entries, e)
		}
		p := Policy{MaxBytes: maxBytes, MaxAge: time.Duration(maxAgeSec) * time.Second}
		if maxAgeSec < 0 {
			p.MaxAge = NoLimit
		}
		grace := time.Duration(g%4) * 24 * time.Hour
		removed := map[Digest]bool{}
		for _, i := range collect(entries, p, now, grace) {
			if removed[entries[i].Digest] {
				t.Fatalf("entry %d removed twice", i)
			}
			removed[entries[i].Digest] = true
		}
		checkCollect(t, "fuzz", entries, removed, p, now, grace)
	})
}
