package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

const fuzzHash = config.ServerHash("0123456789abcdef")

// A snapshot blob: whatever bytes the store holds under the digest a ref
// names. Load must refuse anything that is not a snapshot of this format
// for this server, and never panic.
func FuzzSnapshot(f *testing.F) {
	f.Add([]byte(`{"format":"` + snapshotFormat.Get() + `","serverHash":"0123456789abcdef","tools":[{"name":"t"}]}`))
	f.Add([]byte(`{"format":"` + snapshotFormat.Get() + `","serverHash":"0123456789abcdef","tools":[],"extra":1}`))
	f.Add([]byte(`{"format":"other"}`))
	f.Fuzz(func(t *testing.T, blob []byte) {
		dir := t.TempDir()
		store, err := OpenStore(filepath.Join(dir, "cas"))
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := store.Put(bytes.NewReader(blob))
		if err != nil {
			t.Fatal(err)
		}
		s := NewSchemas(store, filepath.Join(dir, "schemas"))
		if err := writeFileAtomic(s.dir, string(fuzzHash)+".json", []byte(`{"serverHash":"`+string(fuzzHash)+`","digest":"`+string(d)+`","format":"`+snapshotFormat.Get()+`"}`)); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Load(fuzzHash)
		if err == nil && snap.ServerHash != fuzzHash {
			t.Fatalf("loaded a snapshot of %s for %s", snap.ServerHash, fuzzHash)
		}
	})
}

// A schema ref file: any bytes.
func FuzzRef(f *testing.F) {
	f.Add([]byte(`{"serverHash":"0123456789abcdef","digest":"` + string(Digest("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")) + `","format":"x"}`))
	f.Add([]byte(`{"serverHash":"0123456789abcdef","digest":"../../etc/passwd"}`))
	f.Fuzz(func(t *testing.T, ref []byte) {
		dir := t.TempDir()
		store, err := OpenStore(filepath.Join(dir, "cas"))
		if err != nil {
			t.Fatal(err)
		}
		s := NewSchemas(store, filepath.Join(dir, "schemas"))
		if err := writeFileAtomic(s.dir, string(fuzzHash)+".json", ref); err != nil {
			t.Fatal(err)
		}
		_, _ = s.Load(fuzzHash)
	})
}

// The store's index: entry, lease and temp file names and lease contents
// found on disk.
func FuzzStoreIndex(f *testing.F) {
	f.Add("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.1.abc", []byte("2026-01-01T00:00:00Z"))
	f.Add("x.y.z", []byte(""))
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		if name == "" || name == "." || name == ".." || bytes.ContainsAny([]byte(name), "/\x00") {
			return
		}
		dir := t.TempDir()
		store, err := OpenStore(filepath.Join(dir, "cas"))
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{store.leaseDir(), filepath.Join(store.blobRoot(), "e3"), store.tmpDir()} {
			os.MkdirAll(sub, 0o700)
			if err := os.WriteFile(filepath.Join(sub, name), content, 0o600); err != nil {
				return
			}
		}
		_, _ = store.List()
		_, _ = store.Verify()
		_, _ = store.GC(Policy{MaxBytes: 1})
	})
}
