// Package cache is mcpx's one content-addressed store (sha256 blobs with
// leases and byte/age eviction) and the schema cache built on it.
//
// The package follows containerd's split: the store (store.go) reads and
// writes blobs, leases (leases.go) pin blobs across processes, the collector
// (collect.go) is a pure decision over an index, and the policy (policy.go)
// holds the byte and age bounds. Schema snapshots (schemas.go) are blobs
// named by small ref files; their format is derived from the shape of the Go
// type that decodes them (format.go).
package cache

import (
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/config"
)

// Digest is the lowercase hex SHA-256 of a blob's bytes.
type Digest string

// digestLen is the length of a Digest in hex digits.
const digestLen = 64

// Valid reports whether d is 64 lowercase hex digits.
func (d Digest) Valid() bool {
	if len(d) != digestLen {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Short is the first 12 hex digits, for messages.
func (d Digest) Short() string {
	if len(d) > 12 {
		return string(d[:12])
	}
	return string(d)
}

// ErrMiss matches every *MissError with errors.Is.
var ErrMiss = errors.New("cache miss")

// Reasons carried by MissError.Reason. Callers compare against these, never
// against Error().
const (
	ReasonNotFound       = "not found"       // no blob with that digest
	ReasonDigestMismatch = "digest mismatch" // the stored bytes hash to something else; the entry was removed
	ReasonInvalidDigest  = "invalid digest"  // the digest itself is malformed
	ReasonNoSnapshot     = "no snapshot"     // no ref for the server
	ReasonBadRef         = "bad ref"         // the ref file does not parse; it was removed
	ReasonBadSnapshot    = "bad snapshot"    // the blob does not decode as a Snapshot
	ReasonFormat         = "format"          // the snapshot was written by another shape of Snapshot
)

// MissError is every miss, with its reason (one of the Reason constants).
type MissError struct {
	Digest Digest
	Reason string
	// Server is set when the miss is a schema snapshot lookup.
	Server config.ServerHash
	// Detail says more (e.g. both formats), for people.
	Detail string
}

func (e *MissError) Error() string {
	var s string
	switch {
	case e.Server != "" && e.Digest != "":
		s = fmt.Sprintf("schema snapshot for server %s (cache entry %s): %s", e.Server, e.Digest.Short(), e.Reason)
	case e.Server != "":
		s = fmt.Sprintf("schema snapshot for server %s: %s", e.Server, e.Reason)
	default:
		s = fmt.Sprintf("cache entry %s: %s", e.Digest.Short(), e.Reason)
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrMiss) true for every MissError.
func (e *MissError) Is(target error) bool { return target == ErrMiss }
