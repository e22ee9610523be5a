package cache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/internal/owner"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// Defaults for the Store's tunables.
const (
	// DefaultGrace protects a blob stored or used this recently from GC, so
	// a Put followed by a Lease cannot lose the blob in between.
	DefaultGrace = 10 * time.Minute
	// DefaultTempMaxAge is how long a temp file whose writer is still alive
	// may sit unmodified before it counts as a leftover.
	DefaultTempMaxAge = 10 * time.Minute
	// touchEvery bounds how often Get updates a blob's last-use time
	// (Go build cache style: one write per hour, not per read).
	touchEvery = time.Hour
)

// Store is the content-addressed store at <cache>/cas. Safe for concurrent
// use by goroutines and by several processes sharing the directory: writes
// are temp file + fsync + rename, leases are files, and GC runs under an
// exclusive flock on <dir>/gc.lock that Put and Lease share.
//
// Layout:
//
//	<dir>/sha256/<2 hex>/<digest>   blobs; mtime is the last use
//	<dir>/leases/<digest>.<pid>.<r> one file per lease, holding its expiry
//	<dir>/tmp/<pid>.<r>.{put,lease} files being written
//	<dir>/gc.lock, <dir>/gc.stamp   GC lock and last-run stamp
//
// A crash leaves at most a temp file, never a partial blob; the next
// OpenStore or GC removes it.
type Store struct {
	dir string

	// Now is the clock (time.Now when nil). Set it before use; tests move it.
	Now func() time.Time
	// Grace protects entries last used less than Grace ago from GC
	// (DefaultGrace unless changed before use; 0 disables the protection).
	Grace time.Duration
	// TempMaxAge is how old an unmodified temp file of a live writer must be
	// to be removed (DefaultTempMaxAge unless changed before use).
	TempMaxAge time.Duration

	mu    sync.Mutex
	roots []RootsFunc
}

// RootsFunc reports which entries are referenced, and by what (e.g.
// "schemas/<serverHash>.json"). Referenced entries are kept by byte
// eviction but not past the maximum age (see Policy).
type RootsFunc func() (map[Digest][]string, error)

// Entry describes one blob.
type Entry struct {
	Digest  Digest    `json:"digest"`
	Size    int64     `json:"size"`
	Created time.Time `json:"created"` // when this copy was written (birth time where the OS knows it, else LastUse)
	LastUse time.Time `json:"lastUse"`
	Leases  int       `json:"leases"` // live leases (not expired, holder alive)
	Refs    []string  `json:"refs,omitempty"`
}

// Problem is one finding of Verify.
type Problem struct {
	Digest Digest `json:"digest"`
	Reason string `json:"reason"`
}

// OpenStore opens (creating) the store rooted at dir (config.Paths.CAS()),
// removing leftover temp files of crashed writers.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open cache store: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open cache store %s: %w", dir, err)
	}
	s := &Store{dir: abs, Grace: DefaultGrace, TempMaxAge: DefaultTempMaxAge}
	// The store decides what a cached schema says (and so the
	// destructive-call policy): every directory of it must be ours and
	// writable by nobody else (package owner).
	for _, d := range []string{s.blobRoot(), s.leaseDir(), s.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("open cache store %s: %w", abs, err)
		}
	}
	for _, d := range []string{filepath.Dir(abs), abs, s.blobRoot(), s.leaseDir(), s.tmpDir()} {
		if err := owner.CheckDir(d); err != nil {
			return nil, fmt.Errorf("open cache store: %w", err)
		}
	}
	s.sweepTemp()
	return s, nil
}

// Dir is the store's root directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) blobRoot() string { return filepath.Join(s.dir, "sha256") }
func (s *Store) leaseDir() string { return filepath.Join(s.dir, "leases") }
func (s *Store) tmpDir() string   { return filepath.Join(s.dir, "tmp") }
func (s *Store) lockPath() string { return filepath.Join(s.dir, "gc.lock") }

// Path is where the blob lives (for `mcpx call` to print). It is "" for a
// malformed digest. The file may not exist; Get says whether it does.
func (s *Store) Path(d Digest) string {
	if !d.Valid() {
		return ""
	}
	return filepath.Join(s.blobRoot(), string(d[:2]), string(d))
}

// shared takes the GC lock shared: Put's rename and Lease's file creation
// hold it so a GC (which holds it exclusively) sees them whole or not at all.
func (s *Store) shared() (func(), error) {
	lk := flock.New(s.lockPath())
	if err := lk.RLock(); err != nil {
		return nil, fmt.Errorf("lock cache store %s: %w", s.dir, err)
	}
	return func() { _ = lk.Close() }, nil
}

// createTemp makes a temp file named after this process so a later
// OpenStore or GC can tell whether its writer is still alive.
func (s *Store) createTemp(kind string) (*os.File, error) {
	f, err := os.CreateTemp(s.tmpDir(), strconv.Itoa(os.Getpid())+".*."+kind)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(s.tmpDir(), 0o700); err == nil {
			f, err = os.CreateTemp(s.tmpDir(), strconv.Itoa(os.Getpid())+".*."+kind)
		}
	}
	return f, err
}

// Put stores the bytes read from r and returns their digest and size. The
// blob is visible only once complete (rename after fsync). Concurrent Puts of
// the same bytes are safe. The new blob is protected from GC for Grace; use
// PutLease to pin it for longer.
func (s *Store) Put(r io.Reader) (Digest, int64, error) {
	d, n, _, err := s.put(r, 0, false)
	return d, n, err
}

// PutLease is Put plus a Lease taken before the blob becomes visible, so no
// GC (of any process, with any grace) can remove it in between.
func (s *Store) PutLease(r io.Reader, ttl time.Duration) (Digest, int64, *Lease, error) {
	return s.put(r, ttl, true)
}

func (s *Store) put(r io.Reader, ttl time.Duration, lease bool) (d Digest, n int64, l *Lease, err error) {
	tmp, err := s.createTemp("put")
	if err != nil {
		return "", 0, nil, fmt.Errorf("put cache entry: %w", err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmpName)
		}
	}()
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(tmp, h), r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, nil, fmt.Errorf("put cache entry: write %s: %w", tmpName, err)
	}
	now := s.now()
	if err = os.Chtimes(tmpName, now, now); err != nil {
		return "", 0, nil, fmt.Errorf("put cache entry: %w", err)
	}
	d = Digest(hex.EncodeToString(h.Sum(nil)))
	final := s.Path(d)
	if err = os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", 0, nil, fmt.Errorf("put cache entry %s: %w", d.Short(), err)
	}
	unlock, err := s.shared()
	if err != nil {
		return "", 0, nil, fmt.Errorf("put cache entry %s: %w", d.Short(), err)
	}
	defer unlock()
	if lease {
		if l, err = s.writeLease(d, ttl); err != nil {
			return "", 0, nil, fmt.Errorf("put cache entry %s: %w", d.Short(), err)
		}
	}
	// Renaming over an existing copy is fine: same digest, same bytes (and
	// it repairs a copy that rotted on disk).
	if err = os.Rename(tmpName, final); err != nil {
		if l != nil {
			_ = l.Release()
		}
		return "", 0, nil, fmt.Errorf("put cache entry %s: %w", d.Short(), err)
	}
	syncDir(filepath.Dir(final))
	return d, n, l, nil
}

// syncDir makes a rename in dir durable. Best effort: some filesystems
// refuse fsync on directories.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

// Get returns the blob's bytes, verified; a corrupt entry is removed and
// reported as a *MissError. A hit records the use (at most once an hour).
func (s *Store) Get(d Digest) ([]byte, error) {
	if !d.Valid() {
		return nil, &MissError{Digest: d, Reason: ReasonInvalidDigest}
	}
	p := s.Path(d)
	data, fi, err := readVerified(p, d)
	if err != nil {
		return nil, err
	}
	if now := s.now(); now.Sub(fi.ModTime()) > touchEvery {
		_ = os.Chtimes(p, now, now) // best effort: a read-only cache still serves
	}
	return data, nil
}

// readVerified reads the blob at p and checks it hashes to d. A mismatching
// file is removed, unless it was replaced meanwhile (a concurrent Put).
//
// The entry and its fan-out directory must be ours and writable by nobody
// else, the entry a regular file not reached through a symlink (package
// owner): a digest match proves only that the bytes are the ones named,
// not who chose them.
func readVerified(p string, d Digest) ([]byte, os.FileInfo, error) {
	if err := owner.CheckDir(filepath.Dir(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("open cache entry %s: %w", d.Short(), err)
	}
	f, err := owner.OpenFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &MissError{Digest: d, Reason: ReasonNotFound}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open cache entry %s: %w", d.Short(), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("open cache entry %s: %w", d.Short(), err)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()))
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(&buf, h), f); err != nil {
		return nil, nil, fmt.Errorf("read cache entry %s: %w", d.Short(), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != string(d) {
		removeIfSame(p, fi)
		return nil, nil, &MissError{Digest: d, Reason: ReasonDigestMismatch, Detail: "removed; content hashes to " + got[:12]}
	}
	return buf.Bytes(), fi, nil
}

// removeIfSame removes p only if it is still the file fi describes.
func removeIfSame(p string, fi os.FileInfo) {
	if cur, err := os.Lstat(p); err == nil && os.SameFile(cur, fi) {
		_ = os.Remove(p)
	}
}

// Has reports whether a blob for d exists (unverified).
func (s *Store) Has(d Digest) bool {
	p := s.Path(d)
	if p == "" {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

// AddRoots registers a source of references (e.g. the schema refs). GC keeps
// referenced entries from byte eviction and List shows the refs. If fn fails,
// GC fails rather than collect without knowing the roots.
func (s *Store) AddRoots(fn RootsFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roots = append(s.roots, fn)
}

// SetRoots replaces every registered source of references with fn (nil
// clears them).
func (s *Store) SetRoots(fn RootsFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roots = nil
	if fn != nil {
		s.roots = append(s.roots, fn)
	}
}

func (s *Store) rootsMap() (map[Digest][]string, error) {
	s.mu.Lock()
	fns := append([]RootsFunc(nil), s.roots...)
	s.mu.Unlock()
	out := map[Digest][]string{}
	for _, fn := range fns {
		m, err := fn()
		if err != nil {
			return nil, fmt.Errorf("read cache roots: %w", err)
		}
		for d, refs := range m {
			out[d] = append(out[d], refs...)
		}
	}
	for d, refs := range out {
		sort.Strings(refs)
		out[d] = compactStrings(refs)
	}
	return out, nil
}

func compactStrings(ss []string) []string {
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// scan lists every blob (size and last use; birth time when withCreated).
// Files whose names are not digests in the right fan-out directory are
// returned in stray.
func (s *Store) scan(withCreated bool) (entries []Entry, stray []string, err error) {
	fans, err := os.ReadDir(s.blobRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("scan cache store %s: %w", s.dir, err)
	}
	for _, fan := range fans {
		if !fan.IsDir() {
			stray = append(stray, filepath.Join(s.blobRoot(), fan.Name()))
			continue
		}
		dir := filepath.Join(s.blobRoot(), fan.Name())
		des, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("scan cache store %s: %w", s.dir, err)
		}
		for _, de := range des {
			d := Digest(de.Name())
			if !d.Valid() || string(d[:2]) != fan.Name() || !de.Type().IsRegular() {
				stray = append(stray, filepath.Join(dir, de.Name()))
				continue
			}
			fi, err := de.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile
			}
			if err != nil {
				return nil, nil, fmt.Errorf("scan cache store %s: %w", s.dir, err)
			}
			e := Entry{Digest: d, Size: fi.Size(), LastUse: fi.ModTime()}
			if withCreated {
				e.Created = birthTime(filepath.Join(dir, de.Name()), fi)
			}
			entries = append(entries, e)
		}
	}
	return entries, stray, nil
}

// index is scan plus live lease counts and refs.
func (s *Store) index(withCreated, pruneLeases bool) ([]Entry, error) {
	entries, _, err := s.scan(withCreated)
	if err != nil {
		return nil, err
	}
	leases, err := s.liveLeases(pruneLeases)
	if err != nil {
		return nil, err
	}
	roots, err := s.rootsMap()
	if err != nil {
		return nil, err
	}
	for i := range entries {
		e := &entries[i]
		e.Leases = leases[e.Digest]
		e.Refs = roots[e.Digest]
	}
	return entries, nil
}

// List returns every entry with its live leases and refs, most recently
// used first.
func (s *Store) List() ([]Entry, error) {
	entries, err := s.index(true, false)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].LastUse.Equal(entries[j].LastUse) {
			return entries[i].LastUse.After(entries[j].LastUse)
		}
		return entries[i].Digest < entries[j].Digest
	})
	return entries, nil
}

// Verify hashes every entry. Corrupt entries are removed and reported;
// stray files and refs to missing entries are reported and left alone.
// Verify does not count as a use.
func (s *Store) Verify() ([]Problem, error) {
	entries, stray, err := s.scan(false)
	if err != nil {
		return nil, err
	}
	var probs []Problem
	have := make(map[Digest]bool, len(entries))
	for _, e := range entries {
		have[e.Digest] = true
		_, _, err := readVerified(s.Path(e.Digest), e.Digest)
		var miss *MissError
		switch {
		case err == nil:
		case errors.As(err, &miss) && miss.Reason == ReasonNotFound:
			// removed meanwhile
		case errors.As(err, &miss):
			probs = append(probs, Problem{Digest: e.Digest, Reason: miss.Reason + " (removed)"})
		default:
			probs = append(probs, Problem{Digest: e.Digest, Reason: err.Error()})
		}
	}
	for _, p := range stray {
		rel, _ := filepath.Rel(s.dir, p)
		probs = append(probs, Problem{Reason: "stray file " + rel})
	}
	roots, err := s.rootsMap()
	if err != nil {
		return probs, err
	}
	for d, refs := range roots {
		if !have[d] {
			probs = append(probs, Problem{Digest: d, Reason: "missing, referenced by " + strings.Join(refs, ", ")})
		}
	}
	sort.Slice(probs, func(i, j int) bool {
		if probs[i].Digest != probs[j].Digest {
			return probs[i].Digest < probs[j].Digest
		}
		return probs[i].Reason < probs[j].Reason
	})
	return probs, nil
}

// sweepTemp removes temp files whose writer is dead, or that nobody has
// written to for TempMaxAge. It returns how many it removed.
func (s *Store) sweepTemp() int {
	des, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return 0
	}
	maxAge := s.TempMaxAge
	if maxAge <= 0 {
		maxAge = DefaultTempMaxAge
	}
	now := s.now()
	removed := 0
	for _, de := range des {
		p := filepath.Join(s.tmpDir(), de.Name())
		pid, _ := strconv.Atoi(strings.SplitN(de.Name(), ".", 2)[0])
		stale := !proc.Alive(pid)
		if !stale {
			if fi, err := de.Info(); err == nil && now.Sub(fi.ModTime()) > maxAge {
				stale = true
			}
		}
		if stale && os.Remove(p) == nil {
			removed++
		}
	}
	return removed
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}
