package daemon

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/search"
)

// The daemon parses each schema snapshot once. A snapshot's tools are
// decoded into a toolIndex the first time a request needs them, and the
// index is kept, per server, for as long as the server's snapshot has the
// same digest (its content's identity in the store): discovery and calls
// on a server with 10,000 tools then cost a map lookup, not 10,000 JSON
// decodes. Per server definition (the tools/excludeTools filter and the
// namespace name, which a config reload may change without changing the
// snapshot) the index keeps a toolView: the allowed tools, their lookup
// table, and their JSON encoded once (on first use) for GET /v1/tools.
//
// This is also where per-snapshot structures belong that later requests
// reuse: a search index (BM25 over names and descriptions) and the compiled
// input schemas used to type and check call arguments hang off toolIndex
// (one per digest) or toolView (one per definition), built on first use
// under their own sync.Once.

// indexes holds the current toolIndex of each server. Safe for concurrent
// use.
type indexes struct {
	mu     sync.Mutex
	byHash map[config.ServerHash]*toolIndex
}

// indexDecodes counts snapshots decoded into an index, in every daemon of
// the process (a test seam: many requests on one snapshot decode it once).
var indexDecodes atomic.Int64

// toolIndex is one snapshot's tools, decoded once.
type toolIndex struct {
	digest cache.Digest
	tools  []indexedTool // in the server's order; undecodable entries dropped

	mu    sync.Mutex
	views map[*config.Server]*toolView

	derived snapIndex // validators and search documents (snapindex.go)
}

type indexedTool struct {
	name, description string
	annotations       json.RawMessage // nil when absent or null
	definition        json.RawMessage // byte for byte as the server sent it
}

// toolView is what one server definition sees of an index.
type toolView struct {
	idx        *toolIndex // the index it is a view of
	tools      []api.Tool // allowed tools, in order, Namespace set
	byName     map[string]int
	encodeOnce sync.Once
	encoded    []byte // tools as a JSON array, encoded on first use

	briefOnce    sync.Once
	briefEncoded []byte

	searchOnce  sync.Once
	search      *search.Index // the tools' inverted index, built on first search
	searchTools []*api.Tool   // the tools search.Index's documents are, in order
}

// encodedList is tools as a JSON array, encoded on first use (nil if
// encoding fails).
func (v *toolView) encodedList() []byte {
	v.encodeOnce.Do(func() {
		v.encoded, _ = json.Marshal(v.tools)
	})
	return v.encoded
}

// brief is the rows of the brief list (api.AppendToolRow: name and the
// summary of the description, what a listing shows), encoded on first use.
func (v *toolView) brief() []byte {
	v.briefOnce.Do(func() {
		var b []byte
		for _, t := range v.tools {
			b = api.AppendToolRow(b, t.Name, api.Summary(t.Description))
		}
		v.briefEncoded = b
	})
	return v.briefEncoded
}

// get returns the index of snap, whose blob has digest d (empty for a
// snapshot not read from the store, e.g. one just fetched: it is indexed
// but not kept).
func (x *indexes) get(h config.ServerHash, d cache.Digest, snap *cache.Snapshot) *toolIndex {
	if d != "" {
		x.mu.Lock()
		idx := x.byHash[h]
		x.mu.Unlock()
		if idx != nil && idx.digest == d {
			return idx
		}
	}
	idx := &toolIndex{digest: d, tools: make([]indexedTool, 0, len(snap.Tools))}
	indexDecodes.Add(1)
	for _, raw := range snap.Tools {
		if t, ok := decodeTool(raw); ok {
			idx.tools = append(idx.tools, t)
		}
	}
	if d != "" {
		x.mu.Lock()
		if x.byHash == nil {
			x.byHash = map[config.ServerHash]*toolIndex{}
		}
		x.byHash[h] = idx
		x.mu.Unlock()
	}
	return idx
}

// decodeTool reads a raw tool definition's head.
func decodeTool(raw json.RawMessage) (indexedTool, bool) {
	var head struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Name == "" {
		return indexedTool{}, false
	}
	t := indexedTool{name: head.Name, description: head.Description, definition: raw}
	if len(head.Annotations) > 0 && string(head.Annotations) != "null" {
		t.annotations = head.Annotations
	}
	if annotationsAmbiguous(raw) {
		// encoding/json took one of several "annotations" keys (matched
		// case-insensitively, the last one wins): keep something that is not
		// an object, so the policy treats the tool as malformed.
		t.annotations = json.RawMessage(`"ambiguous annotations"`)
	}
	return t, true
}

// view returns what s sees of the index: the tools its filter allows.
func (idx *toolIndex) view(s *config.Server) *toolView {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if v := idx.views[s]; v != nil {
		return v
	}
	v := &toolView{idx: idx, tools: make([]api.Tool, 0, len(idx.tools)), byName: make(map[string]int, len(idx.tools))}
	for _, t := range idx.tools {
		if !s.Options.ToolAllowed(t.name) {
			continue
		}
		if _, dup := v.byName[t.name]; !dup {
			v.byName[t.name] = len(v.tools)
		}
		v.tools = append(v.tools, api.Tool{Namespace: s.Name, Name: t.name, Description: t.description,
			Annotations: t.annotations, Definition: t.definition})
	}
	if idx.views == nil {
		idx.views = map[*config.Server]*toolView{}
	}
	// Views of definitions a reload replaced are dropped with the index
	// (a new snapshot) or stay few: one per reload of this server.
	idx.views[s] = v
	return v
}

// find returns the tool named name.
func (v *toolView) find(name string) (api.Tool, bool) {
	i, ok := v.byName[name]
	if !ok {
		return api.Tool{}, false
	}
	return v.tools[i], true
}

// snapshot loads s's cached snapshot. It returns nil when there is none or
// it is not usable (other format, corrupt); a snapshot recording a failed
// fetch is returned with Error set.
func (d *daemon) snapshot(st *state, name string) *cache.Snapshot {
	snap, _ := d.snapshotDigest(st, name)
	return snap
}

func (d *daemon) snapshotDigest(st *state, name string) (*cache.Snapshot, cache.Digest) {
	snap, digest, err := d.schemas.LoadDigest(st.hashes[name])
	if err != nil {
		// AsType, not As: no reflection for each of hundreds of servers
		// never read, on every listing.
		if _, miss := errors.AsType[*cache.MissError](err); !miss {
			d.log.Printf("load schemas of %s: %v", name, err)
		}
		return nil, ""
	}
	return snap, digest
}

// toolsOf returns s's snapshot and the view of its tools that s allows
// (nil when the snapshot is unusable).
func (d *daemon) toolsOf(st *state, s *config.Server) (*cache.Snapshot, *toolView) {
	snap, digest := d.snapshotDigest(st, s.Name)
	return snap, d.viewOf(st, s, snap, digest)
}

// viewOf indexes snap (digest "" when it was not read from the store).
func (d *daemon) viewOf(st *state, s *config.Server, snap *cache.Snapshot, digest cache.Digest) *toolView {
	if !usable(snap) {
		return nil
	}
	return d.idx.get(st.hashes[s.Name], digest, snap).view(s)
}

// toolOf reads one raw tool definition as the API shows it (Definition
// byte for byte).
func toolOf(ns string, raw json.RawMessage) (api.Tool, bool) {
	t, ok := decodeTool(raw)
	if !ok {
		return api.Tool{}, false
	}
	return api.Tool{Namespace: ns, Name: t.name, Description: t.description, Annotations: t.annotations, Definition: t.definition}, true
}
