// Package cache is mcpx's one content-addressed store (sha256 blobs with
// leases and byte/age eviction) and the schema cache built on it.
package cache

// PENDING: declared signatures, implemented by the cache helper (this file is
// then deleted). Callers code against exactly these.

import (
	"encoding/json"
	"io"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Digest is the lowercase hex SHA-256 of a blob's bytes.
type Digest string

// Store is the content-addressed store at <cache>/cas. Safe for concurrent
// use by goroutines and by several processes sharing the directory.
type Store struct{}

// OpenStore opens (creating) the store rooted at dir (config.Paths.CAS()),
// removing leftover temp files of crashed writers.
func OpenStore(dir string) (*Store, error) { panic("pending") }

// Put stores the bytes read from r and returns their digest and size.
func (s *Store) Put(r io.Reader) (Digest, int64, error) { panic("pending") }

// Get returns the blob's bytes, verified; a corrupt entry is removed and
// reported as a *MissError.
func (s *Store) Get(d Digest) ([]byte, error) { panic("pending") }

// Path is where the blob lives (for `mcpx call` to print).
func (s *Store) Path(d Digest) string { panic("pending") }

// Lease pins d against GC until released or until ttl passes, across
// processes.
func (s *Store) Lease(d Digest, ttl time.Duration) (*Lease, error) { panic("pending") }

// Lease is a held pin.
type Lease struct{}

// Release drops the pin.
func (l *Lease) Release() error { panic("pending") }

// MissError is every miss, with its reason.
type MissError struct {
	Digest Digest
	Reason string
}

func (e *MissError) Error() string { panic("pending") }

// Snapshot is one server's cached schemas (DESIGN §7). Tools, prompts and
// resources are kept as the raw JSON the server sent.
type Snapshot struct {
	Format          string            `json:"format"`
	ServerHash      config.ServerHash `json:"serverHash"`
	FetchedAt       *time.Time        `json:"fetchedAt,omitempty"` // nil when Error is set
	Error           string            `json:"error,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	ServerInfo      json.RawMessage   `json:"serverInfo,omitempty"`
	Instructions    string            `json:"instructions,omitempty"`
	Tools           []json.RawMessage `json:"tools"`
	Prompts         []json.RawMessage `json:"prompts,omitempty"`
	Resources       []json.RawMessage `json:"resources,omitempty"`
}

// Schemas is the schema cache: refs <cache>/schemas/<serverHash>.json
// pointing at snapshot blobs in the store.
type Schemas struct{}

// NewSchemas returns the schema cache over store with refs in dir
// (config.Paths.Schemas()).
func NewSchemas(store *Store, dir string) *Schemas { panic("pending") }

// Load returns the usable snapshot for h or a *MissError saying why not
// (no ref, missing blob, digest mismatch, other format).
func (c *Schemas) Load(h config.ServerHash) (*Snapshot, error) { panic("pending") }

// Save stores snap (setting Format) and points h's ref at it.
func (c *Schemas) Save(snap *Snapshot) error { panic("pending") }

// Invalidate removes h's ref.
func (c *Schemas) Invalidate(h config.ServerHash) error { panic("pending") }
