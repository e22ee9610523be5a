package cache

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fillStore writes n small blobs straight into a real store (bypassing
// Put's fsync, which would dominate the setup), with spread-out last uses.
func fillStore(b *testing.B, n int) (*Store, []Entry, map[Digest][]byte) {
	b.Helper()
	s, err := OpenStore(filepath.Join(b.TempDir(), "cas"))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	entries := make([]Entry, n)
	blobs := make(map[Digest][]byte, n)
	for i := range entries {
		buf := make([]byte, 16)
		binary.LittleEndian.PutUint64(buf, uint64(i))
		data := buf[:8+i%8]
		e := Entry{Digest: digestOf(data), Size: int64(len(data)), LastUse: now.Add(-time.Duration(i%(20*24*60)) * time.Minute)}
		entries[i] = e
		blobs[e.Digest] = data
		writeBlob(b, s, e, data)
	}
	return s, entries, blobs
}

func writeBlob(b testing.TB, s *Store, e Entry, data []byte) {
	p := s.Path(e.Digest)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Chtimes(p, e.LastUse, e.LastUse); err != nil {
		b.Fatal(err)
	}
}

// benchGC measures a GC pass that scans n entries and evicts about 1% of
// them by bytes (refilled, untimed, between passes).
func benchGC(b *testing.B, n int) {
	s, entries, blobs := fillStore(b, n)
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	p := Policy{MaxBytes: total - total/100, MaxAge: NoLimit}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := s.GC(p)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Removed) == 0 {
			b.Fatal("nothing evicted")
		}
		b.StopTimer()
		for _, e := range rep.Removed {
			writeBlob(b, s, e, blobs[e.Digest])
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n), "entries")
}

func BenchmarkGC10k(b *testing.B)  { benchGC(b, 10_000) }
func BenchmarkGC100k(b *testing.B) { benchGC(b, 100_000) }

// BenchmarkCollect100k is the pure decision over an in-memory index.
func BenchmarkCollect100k(b *testing.B) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	entries := make([]Entry, 100_000)
	var total int64
	for i := range entries {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(i))
		entries[i] = Entry{Digest: digestOf(buf[:]), Size: int64(100 + i%1000), LastUse: now.Add(-time.Duration((i*7919)%(40*24*60)) * time.Minute)}
		total += entries[i].Size
	}
	p := Policy{MaxBytes: total / 2, MaxAge: 30 * 24 * time.Hour}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(collect(entries, p, now, DefaultGrace)) == 0 {
			b.Fatal("nothing collected")
		}
	}
}
