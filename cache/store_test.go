package cache

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPutGet(t *testing.T) {
	s, _ := newStore(t)
	data := "hello, cache"
	d := put(t, s, data)
	if d != digestOf([]byte(data)) {
		t.Fatalf("Put digest = %s, want sha256 of the bytes", d)
	}
	want := filepath.Join(s.Dir(), "sha256", string(d[:2]), string(d))
	if s.Path(d) != want {
		t.Fatalf("Path = %s, want %s", s.Path(d), want)
	}
	got, err := s.Get(d)
	if err != nil || string(got) != data {
		t.Fatalf("Get = %q, %v; want %q", got, err, data)
	}
	if tmps, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(tmps) != 0 {
		t.Errorf("temp files left after Put: %d", len(tmps))
	}
	var miss *MissError
	if _, err := s.Get(digestOf([]byte("absent"))); !errors.As(err, &miss) || miss.Reason != ReasonNotFound {
		t.Errorf("Get(absent) = %v, want MissError not found", err)
	}
	if _, err := s.Get("nothex"); !errors.Is(err, ErrMiss) {
		t.Errorf("Get(malformed) = %v, want a miss", err)
	}
	if s.Path("nothex") != "" {
		t.Errorf("Path(malformed) should be empty")
	}
}

func TestConcurrentPutsOfOneBlob(t *testing.T) {
	s, _ := newStore(t)
	data := bytes.Repeat([]byte("same bytes "), 10000)
	var wg sync.WaitGroup
	digests := make([]Digest, 8)
	errs := make([]error, 8)
	for i := range digests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			digests[i], _, errs[i] = s.Put(bytes.NewReader(data))
		}()
	}
	wg.Wait()
	for i := range digests {
		if errs[i] != nil || digests[i] != digestOf(data) {
			t.Fatalf("put %d: %s, %v", i, digests[i], errs[i])
		}
	}
	got, err := s.Get(digests[0])
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after concurrent puts: %v", err)
	}
	entries, _ := s.List()
	if len(entries) != 1 {
		t.Fatalf("List holds %d entries, want 1", len(entries))
	}
}

// flip corrupts one byte of the stored blob.
func flip(t *testing.T, s *Store, d Digest) {
	t.Helper()
	p := s.Path(d)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptEntryIsRemovedNotServed(t *testing.T) {
	s, _ := newStore(t)
	d := put(t, s, "some precious bytes")
	flip(t, s, d)
	got, err := s.Get(d)
	var miss *MissError
	if !errors.As(err, &miss) || miss.Reason != ReasonDigestMismatch || got != nil {
		t.Fatalf("Get(corrupt) = %q, %v; want MissError digest mismatch", got, err)
	}
	if !errors.Is(err, ErrMiss) || !strings.Contains(err.Error(), d.Short()) {
		t.Errorf("error %q should be a miss naming the entry", err)
	}
	if s.Has(d) {
		t.Fatalf("corrupt entry still on disk")
	}
	if _, err := s.Get(d); !errors.As(err, &miss) || miss.Reason != ReasonNotFound {
		t.Fatalf("second Get = %v, want not found", err)
	}
}

func TestVerify(t *testing.T) {
	s, _ := newStore(t)
	good := put(t, s, "good")
	bad := put(t, s, "bad one")
	flip(t, s, bad)
	dangling := digestOf([]byte("never stored"))
	s.SetRoots(func() (map[Digest][]string, error) {
		return map[Digest][]string{dangling: {"schemas/x.json"}, good: {"schemas/y.json"}}, nil
	})
	stray := filepath.Join(s.Dir(), "sha256", "zz")
	if err := os.WriteFile(stray, []byte("?"), 0o600); err != nil {
		t.Fatal(err)
	}
	probs, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	found := map[Digest]string{}
	var strays int
	for _, p := range probs {
		if p.Digest == "" {
			strays++
			continue
		}
		found[p.Digest] = p.Reason
	}
	if !strings.HasPrefix(found[bad], ReasonDigestMismatch) {
		t.Errorf("corrupt entry not reported: %+v", probs)
	}
	if !strings.Contains(found[dangling], "schemas/x.json") {
		t.Errorf("dangling ref not reported: %+v", probs)
	}
	if _, ok := found[good]; ok || strays != 1 || len(probs) != 3 {
		t.Errorf("Verify = %+v, want exactly the corrupt entry, the dangling ref and the stray file", probs)
	}
	if s.Has(bad) || !s.Has(good) {
		t.Errorf("Verify must remove the corrupt entry and only it")
	}
}

func TestGetTouchesAtMostHourly(t *testing.T) {
	s, clk := newStore(t)
	d := put(t, s, "x")
	t0 := clk.Now()
	mtime := func() time.Time {
		fi, err := os.Stat(s.Path(d))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	if !mtime().Equal(t0) {
		t.Fatalf("Put: last use %v, want the store clock %v", mtime(), t0)
	}
	clk.Advance(30 * time.Minute)
	if _, err := s.Get(d); err != nil {
		t.Fatal(err)
	}
	if !mtime().Equal(t0) {
		t.Errorf("Get within the hour touched the entry")
	}
	clk.Advance(31 * time.Minute)
	if _, err := s.Get(d); err != nil {
		t.Fatal(err)
	}
	if !mtime().Equal(clk.Now()) {
		t.Errorf("Get after an hour: last use %v, want %v", mtime(), clk.Now())
	}
}

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestOpenStoreRemovesLeftovers(t *testing.T) {
	s, _ := newStore(t)
	tmp := filepath.Join(s.Dir(), "tmp")
	dead := filepath.Join(tmp, strconv.Itoa(deadPid(t))+".123.put")
	mine := filepath.Join(tmp, strconv.Itoa(os.Getpid())+".456.put")
	stale := filepath.Join(tmp, strconv.Itoa(os.Getpid())+".789.put")
	for _, p := range []string{dead, mine, stale} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(s.Dir()); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, mine: true, stale: false} {
		_, err := os.Stat(p)
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), got, want)
		}
	}
}

func TestLeaseExpiresAndMissing(t *testing.T) {
	s, clk := newStore(t)
	s.Grace = 0
	d := put(t, s, "leased for an hour")
	l, err := s.Lease(d, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	purge := Policy{MaxBytes: 0, MaxAge: 0}
	clk.Advance(30 * time.Minute)
	if _, err := s.GC(purge); err != nil {
		t.Fatal(err)
	}
	if !s.Has(d) {
		t.Fatalf("entry removed while its lease runs")
	}
	clk.Advance(31 * time.Minute)
	rep, err := s.GC(purge)
	if err != nil {
		t.Fatal(err)
	}
	if s.Has(d) || rep.LeasesRemoved != 1 {
		t.Fatalf("after expiry: present=%v, leases removed %d; want gone, 1", s.Has(d), rep.LeasesRemoved)
	}
	if err := l.Release(); err != nil {
		t.Errorf("releasing an expired lease: %v", err)
	}
	var miss *MissError
	if _, err := s.Lease(d, time.Hour); !errors.As(err, &miss) || miss.Reason != ReasonNotFound {
		t.Errorf("Lease(missing) = %v, want MissError not found", err)
	}

	// Released leases stop counting at once.
	d2 := put(t, s, "released")
	l2, err := s.Lease(d2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := s.List(); len(entries) != 1 || entries[0].Leases != 1 {
		t.Fatalf("List = %+v, want one lease", entries)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(purge); err != nil {
		t.Fatal(err)
	}
	if s.Has(d2) {
		t.Errorf("released entry survived a purge")
	}
}

func TestGCRefsGraceAndAge(t *testing.T) {
	s, clk := newStore(t)
	ref := put(t, s, "referenced")
	plain := put(t, s, "plain")
	s.SetRoots(func() (map[Digest][]string, error) {
		return map[Digest][]string{ref: {"schemas/a.json"}}, nil
	})
	// Within the grace period nothing goes, whatever the policy.
	rep, err := s.GC(Policy{MaxBytes: 0, MaxAge: 0})
	if err != nil || len(rep.Removed) != 0 {
		t.Fatalf("GC within grace removed %v (%v)", rep.Removed, err)
	}
	clk.Advance(DefaultGrace + time.Minute)
	rep, err = s.GC(Policy{MaxBytes: 0, MaxAge: NoLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Has(ref) || s.Has(plain) || len(rep.Removed) != 1 || rep.FreedBytes != int64(len("plain")) || rep.Kept != 1 {
		t.Fatalf("byte eviction: report %+v; want the unreferenced entry gone, the referenced kept", rep)
	}
	entries, _ := s.List()
	if len(entries) != 1 || len(entries[0].Refs) != 1 || entries[0].Refs[0] != "schemas/a.json" {
		t.Fatalf("List = %+v, want the ref shown", entries)
	}
	clk.Advance(24 * time.Hour)
	if _, err := s.GC(Policy{MaxBytes: NoLimit, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if s.Has(ref) {
		t.Fatalf("a ref must not keep an entry past the maximum age")
	}
	s.SetRoots(func() (map[Digest][]string, error) { return nil, errors.New("boom") })
	if _, err := s.GC(DefaultPolicy()); err == nil {
		t.Fatalf("GC must fail when the roots cannot be read")
	}
}

func TestGCEvery(t *testing.T) {
	s, clk := newStore(t)
	if _, ran, err := s.GCEvery(DefaultPolicy(), 24*time.Hour); !ran || err != nil {
		t.Fatalf("first GCEvery: ran=%v err=%v", ran, err)
	}
	clk.Advance(time.Hour)
	if _, ran, _ := s.GCEvery(DefaultPolicy(), 24*time.Hour); ran {
		t.Fatalf("GCEvery ran again within the interval")
	}
	clk.Advance(24 * time.Hour)
	if _, ran, _ := s.GCEvery(DefaultPolicy(), 24*time.Hour); !ran {
		t.Fatalf("GCEvery did not run after the interval")
	}
}
