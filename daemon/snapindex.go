package daemon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sync"

	"github.com/mcpx-dev/mcpx/cache"
)

// snapIndex is what the daemon derives from one snapshot beyond the decoded
// tool list of index.go: the compiled argument validators of its tools
// (built on first use, once per tool) and its search documents. It is keyed
// by the snapshot's digest, so it is built once per distinct snapshot
// however often the snapshot is loaded or decoded. Safe for concurrent use.
type snapIndex struct {
	digest string

	mu    sync.Mutex
	tools map[string]*toolSchema // by tool name, compiled on first use

	docsOnce sync.Once
	docs     map[string]*searchDoc // by tool name: the search documents
}

// snapIndexes holds the snapIndex of every snapshot in use. The zero value
// is ready. Safe for concurrent use.
type snapIndexes struct {
	mu       sync.Mutex
	byDigest map[string]*snapIndex
	// digests remembers the digest of each decoded snapshot (the schema
	// cache hands out the same *Snapshot while its ref is unchanged), so
	// a snapshot is hashed once per decode, not once per request.
	digests map[*cache.Snapshot]string
}

// maxIndexes bounds the entries kept: a daemon serves a handful of servers,
// each with one current snapshot; when refetches pile up past the bound the
// table is started afresh (entries are rebuilt on demand).
const maxIndexes = 256

// of returns the index of snap (nil for nil).
func (x *snapIndexes) of(snap *cache.Snapshot) *snapIndex {
	if snap == nil {
		return nil
	}
	x.mu.Lock()
	dg, ok := x.digests[snap]
	x.mu.Unlock()
	if !ok {
		dg = snapshotDigest(snap)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byDigest == nil || len(x.byDigest) >= maxIndexes || len(x.digests) >= maxIndexes {
		x.byDigest = map[string]*snapIndex{}
		x.digests = map[*cache.Snapshot]string{}
	}
	x.digests[snap] = dg
	ix, ok := x.byDigest[dg]
	if !ok {
		ix = &snapIndex{digest: dg, tools: map[string]*toolSchema{}}
		x.byDigest[dg] = ix
	}
	return ix
}

// snapshotDigest identifies a snapshot's content: its server and its tools
// as the server sent them.
func snapshotDigest(snap *cache.Snapshot) string {
	h := sha256.New()
	var n [8]byte
	write := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	write([]byte(snap.ServerHash))
	write([]byte(snap.Error))
	for _, t := range snap.Tools {
		write(t)
	}
	return hex.EncodeToString(h.Sum(nil))
}
