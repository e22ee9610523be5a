package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// churn puts, leases, saves snapshots and collects as hard as the policy
// allows (grace 0, byte budget 0), checking after every step that nothing it
// holds leased or referenced was lost. It returns the leases it still holds.
func churn(s *Store, id, n int) ([]*Lease, error) {
	schemas := NewSchemas(s, filepath.Join(filepath.Dir(s.Dir()), "schemas"))
	rnd := rand.New(rand.NewSource(int64(id)))
	purge := Policy{MaxBytes: 0, MaxAge: NoLimit}
	var held []*Lease
	for i := 0; i < n; i++ {
		buf := make([]byte, 64+rnd.Intn(4096))
		rnd.Read(buf)
		_, _, l, err := s.PutLease(bytes.NewReader(buf), 0)
		if err != nil {
			return held, err
		}
		held = append(held, l)

		// A plain Put may be collected before the Lease (grace is 0
		// here); but once Lease succeeds the blob must stay.
		rnd.Read(buf)
		d, _, err := s.Put(bytes.NewReader(buf))
		if err != nil {
			return held, err
		}
		if l, err := s.Lease(d, time.Hour); err == nil {
			held = append(held, l)
		} else if !errors.Is(err, ErrMiss) {
			return held, err
		}

		if i%3 == 2 {
			k := rnd.Intn(len(held))
			if err := held[k].Release(); err != nil {
				return held, err
			}
			held = append(held[:k], held[k+1:]...)
		}

		h := config.ServerHash(fmt.Sprintf("p%d-%d", id, i%4))
		now := time.Now()
		snap := &Snapshot{ServerHash: h, FetchedAt: &now, Tools: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":"t%d"}`, i))}}
		if err := schemas.Save(snap); err != nil {
			return held, err
		}
		got, err := schemas.Load(h)
		if err != nil {
			return held, fmt.Errorf("step %d: referenced snapshot lost: %w", i, err)
		}
		if want := fmt.Sprintf(`{"name":"t%d"}`, i); string(got.Tools[0]) != want {
			return held, fmt.Errorf("step %d: snapshot tools = %s, want %s", i, got.Tools[0], want)
		}

		if i%2 == 0 {
			if _, err := s.GC(purge); err != nil {
				return held, err
			}
		}
		for _, l := range held {
			if _, err := s.Get(l.Digest); err != nil {
				return held, fmt.Errorf("step %d: leased entry lost: %w", i, err)
			}
		}
	}
	return held, nil
}

// Two processes putting, leasing, saving snapshots and collecting at once
// lose nothing leased or referenced.
func TestTwoProcessesLoseNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cas")
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Grace = 0
	const steps = 25
	child, out, _ := helper(t, "churn", dir, strconv.Itoa(steps))

	held, err := churn(s, os.Getpid(), steps)
	if err != nil {
		t.Fatalf("parent: %v", err)
	}
	if line := waitLine(t, out, "done"); line != "done" {
		t.Fatalf("child: %s", line)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}

	// The child is gone: its leases no longer count, its refs still do.
	real := NewSchemas(s, filepath.Join(filepath.Dir(dir), "schemas"))
	if _, err := s.GC(Policy{MaxBytes: 0, MaxAge: NoLimit}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{os.Getpid(), child.Process.Pid} {
		for k := 0; k < 4; k++ {
			h := config.ServerHash(fmt.Sprintf("p%d-%d", pid, k))
			if _, err := real.Load(h); err != nil {
				t.Errorf("after both finished: %v", err)
			}
		}
	}
	for _, l := range held {
		if _, err := s.Get(l.Digest); err != nil {
			t.Errorf("after both finished, parent's leased entry: %v", err)
		}
	}
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	// Only the parent's leased blobs and the 8 referenced snapshots remain.
	want := map[Digest]bool{}
	for _, l := range held {
		want[l.Digest] = true
	}
	roots, _ := real.Roots()
	for d := range roots {
		want[d] = true
	}
	if len(entries) != len(want) {
		t.Errorf("store holds %d entries, want %d (leased by the live parent or referenced)", len(entries), len(want))
	}
}

// A writer killed in the middle of Put leaves no visible entry, and the next
// OpenStore removes its temp file.
func TestKilledPutLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cas")
	if _, err := OpenStore(dir); err != nil {
		t.Fatal(err)
	}
	child, out, _ := helper(t, "slowput", dir, "")
	waitLine(t, out, "started")

	tmps, _ := os.ReadDir(filepath.Join(dir, "tmp"))
	if len(tmps) != 1 {
		t.Fatalf("while the put runs, tmp holds %d files, want 1", len(tmps))
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("after a killed put, List = %v, want nothing", entries)
	}
	var files []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Name() != "gc.lock" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("after OpenStore, garbage left: %v", files)
	}
}

// A lease taken by another process protects the entry while that process
// lives, and stops protecting it when the process dies without releasing.
func TestLeaseAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cas")
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Grace = 0
	d := put(t, s, "pinned by a child")
	other := put(t, s, "pinned by nobody")
	purge := Policy{MaxBytes: 0, MaxAge: 0}

	child, out, _ := helper(t, "lease", dir, string(d))
	waitLine(t, out, "leased")

	rep, err := s.GC(purge)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Has(d) {
		t.Fatalf("entry leased by a live child was removed (report %+v)", rep)
	}
	if s.Has(other) {
		t.Fatalf("unleased entry survived a purge")
	}
	entries, _ := s.List()
	if len(entries) != 1 || entries[0].Leases != 1 {
		t.Fatalf("List = %+v, want one entry with one lease", entries)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	rep, err = s.GC(purge)
	if err != nil {
		t.Fatal(err)
	}
	if s.Has(d) {
		t.Fatalf("entry still kept by a dead child's lease")
	}
	if rep.LeasesRemoved != 1 {
		t.Errorf("LeasesRemoved = %d, want 1 (the dead child's)", rep.LeasesRemoved)
	}
}
