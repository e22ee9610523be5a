package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/filestamp"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Snapshot is one server's cached schemas (DESIGN §7). Tools, prompts and
// resources are kept as the raw JSON the server sent.
//
// Changing this type's shape changes SnapshotFormat, so every snapshot saved
// before is refetched instead of half-read.
type Snapshot struct {
	Format     string            `json:"format"`
	ServerHash config.ServerHash `json:"serverHash"`
	FetchedAt  *time.Time        `json:"fetchedAt,omitempty"` // nil when Error is set
	Error      string            `json:"error,omitempty"`
	// Stderr is the tail of the server's stderr when a fetch failed
	// (Error says what failed, without it).
	Stderr          string            `json:"stderr,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	ServerInfo      json.RawMessage   `json:"serverInfo,omitempty"`
	Instructions    string            `json:"instructions,omitempty"`
	Tools           []json.RawMessage `json:"tools"`
	Prompts         []json.RawMessage `json:"prompts,omitempty"`
	Resources       []json.RawMessage `json:"resources,omitempty"`
	// ResourceTemplates is resources/templates/list, raw.
	ResourceTemplates []json.RawMessage `json:"resourceTemplates,omitempty"`
	// TTLMs is the caching hint of a 2026-07-28 server's list results
	// (SEP-2549; the shortest of them): the snapshot is stale TTLMs
	// milliseconds after FetchedAt. Nil: no hint, the snapshot is current
	// until the server says its lists changed.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is the lists' cacheScope ("private" when any is):
	// private lists belong to the login they were read with.
	CacheScope string `json:"cacheScope,omitempty"`
	// Capabilities are the server's, as it declared them (serve offers
	// hosts what the servers behind it offer: resources.subscribe).
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
}

// Stale reports whether the snapshot's caching hint has run out at now
// (never for a snapshot without a hint, or of a failed fetch).
func (s *Snapshot) Stale(now time.Time) bool {
	if s == nil || s.TTLMs == nil || s.FetchedAt == nil {
		return false
	}
	return !now.Before(s.FetchedAt.Add(time.Duration(*s.TTLMs) * time.Millisecond))
}

// Ref is a schema ref file, <schemas>/<serverHash>.json.
type Ref struct {
	ServerHash config.ServerHash `json:"serverHash"`
	Digest     Digest            `json:"digest"`
	Format     string            `json:"format"`
	SavedAt    time.Time         `json:"savedAt"`
}

// Schemas is the schema cache: refs <cache>/schemas/<serverHash>.json
// pointing at snapshot blobs in the store. The refs are roots of the store:
// a referenced snapshot is kept by byte eviction (but not past the maximum
// age). Safe for concurrent use by goroutines and processes: refs are
// replaced by rename, and the last Save wins.
type Schemas struct {
	store *Store
	dir   string

	// memo keeps the last snapshot Load decoded per server, valid while
	// the ref file is the one it was read from and for at most touchEvery
	// (so the blob's last use is still touched and its digest re-checked
	// that often). The daemon loads a snapshot on every call and every
	// discovery request; reading, hashing and decoding it each time cost
	// ~0.4 ms per server.
	mu   sync.Mutex
	memo map[config.ServerHash]memoEntry

	// With Watch, gen counts the changes inotify reported in the refs
	// directory: a memo entry taken at the current generation needs no
	// stat (refwatch_linux.go).
	watching atomic.Bool
	gen      atomic.Uint64
	// changed holds one pending wake-up for the reader of Changed after
	// the watch saw the refs change.
	changed chan struct{}
}

type memoEntry struct {
	ref    filestamp.Stamp
	gen    uint64 // c.gen when ref was stamped
	loaded time.Time
	snap   *Snapshot
	digest Digest
	miss   error // the *MissError of a server with no ref (snap nil)
}

// Watch lets Load trust a snapshot it decoded without the stat of its ref
// on every call, for as long as the refs directory reports no change (by
// this process or another); where changes cannot be watched (not Linux,
// inotify unavailable) Load keeps stat'ing. The daemon, which loads a
// snapshot on every call and every discovery request, watches; a change
// reaches Load as soon as the watch goroutine has read its event.
func (c *Schemas) Watch() error { return c.watchRefs() }

// Watching reports whether a watch (Watch) is running: while it is,
// Changed fires after every change of a ref.
func (c *Schemas) Watching() bool { return c.watching.Load() }

// Changed fires after the watch saw a ref change (saved, replaced,
// dropped, by this process or another), keeping at most one wake-up
// pending; it never fires without a watch. It has one reader: `mcpx
// serve`, which rebuilds its catalog when a snapshot changed instead of
// every second.
func (c *Schemas) Changed() <-chan struct{} { return c.changed }

// NewSchemas returns the schema cache over store with refs in dir
// (config.Paths.Schemas()), and registers its refs as roots of store.
func NewSchemas(store *Store, dir string) *Schemas {
	c := &Schemas{store: store, dir: dir, changed: make(chan struct{}, 1)}
	store.AddRoots(c.Roots)
	return c
}

func (c *Schemas) refPath(h config.ServerHash) string {
	return filepath.Join(c.dir, string(h)+".json")
}

// validHash keeps a server hash from naming a file outside the refs dir.
func validHash(h config.ServerHash) bool {
	if h == "" || h[0] == '-' {
		return false
	}
	// A byte loop, not strings.ContainsAny, which builds its set on every
	// call: a listing of 500 servers asks 500 times.
	for i := 0; i < len(h); i++ {
		if c := h[i]; c == '/' || c == '\\' || c == '.' {
			return false
		}
	}
	return true
}

// Load returns the usable snapshot for h or a *MissError saying why not
// (no ref, missing blob, digest mismatch, other format). A ref whose blob
// is missing or corrupt is dropped; a ref of another format is left for the
// next Save to replace (an older mcpx sharing the cache may still read it).
// A snapshot of a failed fetch is returned as is: Error set, FetchedAt nil.
//
// The snapshot returned is shared with later calls: callers must not modify
// it.
func (c *Schemas) Load(h config.ServerHash) (*Snapshot, error) {
	snap, _, err := c.LoadDigest(h)
	return snap, err
}

// LoadDigest is Load that also returns the digest of the snapshot's blob in
// the store: the identity of its content, under which the daemon keeps what
// it derives from a snapshot (its decoded tool index).
func (c *Schemas) LoadDigest(h config.ServerHash) (*Snapshot, Digest, error) {
	if !validHash(h) {
		return nil, "", &MissError{Server: h, Reason: ReasonNoSnapshot, Detail: "malformed server hash"}
	}
	// The generation is read before the stat: an event that arrives
	// after it leaves the memo entry at an older generation, so the next
	// Load stats again.
	gen := c.gen.Load()
	watched := c.watching.Load()
	c.mu.Lock()
	m, hit := c.memo[h]
	// A remembered miss needs no clock: it has no blob to touch, and the
	// watch bumps gen when its ref appears (the clock costs a listing of
	// hundreds of servers never read a twentieth of its CPU here).
	if hit && watched && m.gen == gen && (m.miss != nil || c.store.now().Sub(m.loaded) < touchEvery) {
		c.mu.Unlock()
		return m.snap, m.digest, m.miss
	}
	c.mu.Unlock()
	st, err := filestamp.Of(c.refPath(h))
	ok := err == nil && st.Exists
	c.mu.Lock()
	m, hit = c.memo[h]
	if !ok || !hit || m.miss != nil || m.ref != st || c.store.now().Sub(m.loaded) >= touchEvery {
		delete(c.memo, h)
		hit = false
	} else {
		m.gen = gen
		c.memo[h] = m
	}
	c.mu.Unlock()
	if hit {
		return m.snap, m.digest, nil
	}
	snap, digest, err := c.load(h)
	var miss *MissError
	switch {
	case err == nil && ok:
		// Stamped before reading: a ref replaced meanwhile has another
		// stamp, so the next Load reads it.
		c.remember(h, memoEntry{ref: st, gen: gen, loaded: c.store.now(), snap: snap, digest: digest})
	case watched && !ok && errors.As(err, &miss) && miss.Reason == ReasonNoSnapshot:
		// No ref: remembered only while the watch runs, which bumps
		// gen when one is created. A daemon with hundreds of servers
		// never read would otherwise stat and open each one's ref on
		// every discovery request (`ls` of 500 servers: 78 % of the
		// daemon's CPU).
		c.remember(h, memoEntry{gen: gen, loaded: c.store.now(), miss: err})
	}
	return snap, digest, err
}

func (c *Schemas) remember(h config.ServerHash, m memoEntry) {
	c.mu.Lock()
	if c.memo == nil {
		c.memo = map[config.ServerHash]memoEntry{}
	}
	c.memo[h] = m
	c.mu.Unlock()
}

// forget drops h's memo: this process is about to replace or remove its
// ref (the stamp would tell too; this does not rely on a fresh inode).
func (c *Schemas) forget(h config.ServerHash) {
	c.mu.Lock()
	delete(c.memo, h)
	c.mu.Unlock()
}

func (c *Schemas) load(h config.ServerHash) (*Snapshot, Digest, error) {
	ref, err := c.readRef(h)
	if err != nil {
		return nil, "", err
	}
	if ref.Format != snapshotFormat.Get() {
		return nil, "", &MissError{Server: h, Digest: ref.Digest, Reason: ReasonFormat,
			Detail: fmt.Sprintf("saved as %s, this mcpx reads %s", ref.Format, snapshotFormat.Get())}
	}
	data, err := c.store.Get(ref.Digest)
	var miss *MissError
	if errors.As(err, &miss) {
		_ = c.dropRef(h, ref.Digest)
		return nil, "", &MissError{Server: h, Digest: ref.Digest, Reason: miss.Reason, Detail: "ref dropped"}
	}
	if err != nil {
		return nil, "", fmt.Errorf("load schema snapshot for server %s: %w", h, err)
	}
	// The blob's own format decides, whatever the ref says.
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		_ = c.dropRef(h, ref.Digest)
		return nil, "", &MissError{Server: h, Digest: ref.Digest, Reason: ReasonBadSnapshot, Detail: err.Error()}
	}
	if head.Format != snapshotFormat.Get() {
		return nil, "", &MissError{Server: h, Digest: ref.Digest, Reason: ReasonFormat,
			Detail: fmt.Sprintf("snapshot is %s, this mcpx reads %s", head.Format, snapshotFormat.Get())}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var snap Snapshot
	if err := dec.Decode(&snap); err != nil || snap.ServerHash != h {
		detail := fmt.Sprintf("snapshot is for server %s", snap.ServerHash)
		if err != nil {
			detail = err.Error()
		}
		_ = c.dropRef(h, ref.Digest)
		return nil, "", &MissError{Server: h, Digest: ref.Digest, Reason: ReasonBadSnapshot, Detail: detail}
	}
	return &snap, ref.Digest, nil
}

// readRef reads h's ref. The refs directory and the ref must be ours and
// writable by nobody else (package owner), else the error wraps
// owner.ErrUnsafe and the snapshot is not used.
func (c *Schemas) readRef(h config.ServerHash) (*Ref, error) {
	if err := owner.CheckDir(c.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read schema ref for server %s: %w", h, err)
	}
	b, err := owner.ReadFile(c.refPath(h), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissError{Server: h, Reason: ReasonNoSnapshot}
	}
	if err != nil {
		return nil, fmt.Errorf("read schema ref for server %s: %w", h, err)
	}
	var ref Ref
	if err := json.Unmarshal(b, &ref); err != nil || ref.ServerHash != h || !ref.Digest.Valid() {
		_ = os.Remove(c.refPath(h))
		detail := "ref names another server or a malformed digest; removed"
		if err != nil {
			detail = err.Error() + "; removed"
		}
		return nil, &MissError{Server: h, Reason: ReasonBadRef, Detail: detail}
	}
	return &ref, nil
}

// dropRef removes h's ref if it still points at d (a concurrent Save may
// have replaced it with a good one).
func (c *Schemas) dropRef(h config.ServerHash, d Digest) error {
	b, err := os.ReadFile(c.refPath(h))
	if err != nil {
		return nil
	}
	var ref Ref
	if json.Unmarshal(b, &ref) == nil && ref.Digest != d {
		return nil
	}
	if err := os.Remove(c.refPath(h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Save stores snap (setting Format) and points h's ref at it. A snapshot
// with Error set records a failed fetch: its FetchedAt is cleared.
func (c *Schemas) Save(snap *Snapshot) error {
	h := snap.ServerHash
	c.forget(h)
	if !validHash(h) {
		return fmt.Errorf("save schema snapshot: malformed server hash %q", h)
	}
	snap.Format = snapshotFormat.Get()
	if snap.Error != "" {
		snap.FetchedAt = nil
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("save schema snapshot for server %s: %w", h, err)
	}
	// The lease covers the moment between the blob appearing and the ref
	// naming it; after that the ref is the root.
	d, _, lease, err := c.store.PutLease(bytes.NewReader(data), time.Minute)
	if err != nil {
		return fmt.Errorf("save schema snapshot for server %s: %w", h, err)
	}
	defer lease.Release()
	ref, err := json.Marshal(Ref{ServerHash: h, Digest: d, Format: snapshotFormat.Get(), SavedAt: c.store.now().UTC()})
	if err != nil {
		return fmt.Errorf("save schema snapshot for server %s: %w", h, err)
	}
	if err := writeFileAtomic(c.dir, string(h)+".json", ref); err != nil {
		return fmt.Errorf("save schema ref for server %s: %w", h, err)
	}
	return nil
}

// Invalidate removes h's ref. A missing ref is not an error.
func (c *Schemas) Invalidate(h config.ServerHash) error {
	c.forget(h)
	if !validHash(h) {
		return nil
	}
	if err := os.Remove(c.refPath(h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("invalidate schema snapshot for server %s: %w", h, err)
	}
	return nil
}

// Roots reports the digest every ref points at, as "schemas/<serverHash>.json".
// It is registered with the store by NewSchemas. Unreadable refs are skipped;
// leftover temp files of crashed writers are removed.
func (c *Schemas) Roots() (map[Digest][]string, error) {
	des, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schema refs %s: %w", c.dir, err)
	}
	out := map[Digest][]string{}
	now := c.store.now()
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
			if fi, err := de.Info(); err == nil && now.Sub(fi.ModTime()) > DefaultTempMaxAge {
				_ = os.Remove(filepath.Join(c.dir, name))
			}
			continue
		}
		h, ok := strings.CutSuffix(name, ".json")
		if !ok || !validHash(config.ServerHash(h)) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.dir, name))
		if err != nil {
			continue
		}
		var ref Ref
		if json.Unmarshal(b, &ref) != nil || !ref.Digest.Valid() {
			continue
		}
		out[ref.Digest] = append(out[ref.Digest], "schemas/"+name)
	}
	return out, nil
}

// writeFileAtomic writes dir/name by temp file + fsync + rename.
func writeFileAtomic(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	syncDir(dir)
	return nil
}
