package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Canonical returns the canonical form of a JSON value: object keys sorted
// (bytewise, at every depth), no insignificant whitespace, numbers exactly as
// written, strings re-encoded by encoding/json without HTML escaping. The
// hashes of DESIGN §3 are computed over it, so two files that differ only in
// layout, key order or comments hash alike.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("canonical json: trailing data after the value")
	}
	return canonicalValue(v)
}

func canonicalValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encoding/json writes map keys sorted and compact; json.Number keeps
	// the number's text.
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func hexSum(b []byte, n int) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:n]
}

// KeyOf computes the DaemonKey of a list of sources: the first 12 hex digits
// of SHA-256 over the paths joined with NUL, in the order given (nearest
// first). The paths must already be symlink-resolved, as Discover and Load
// return them. No sources is BuiltinKey. Only paths are hashed, so editing a
// file never moves its daemon.
func KeyOf(sources []string) DaemonKey {
	if len(sources) == 0 {
		return BuiltinKey
	}
	return DaemonKey(hexSum([]byte(strings.Join(sources, "\x00")), 12))
}

// DaemonKey of the config (KeyOf(c.Sources)).
func (c *Config) DaemonKey() DaemonKey { return KeyOf(c.Sources) }

// SchemaHash of the config: the first 16 hex digits of SHA-256 over the
// canonical JSON of the object {name: definition} holding every enabled
// server (each entry complete, including its `mcpx` block, and the
// directory a stdio server runs in; see Hash). Any edit to a served
// definition changes it.
func (c *Config) SchemaHash() SchemaHash {
	all := make(map[string]map[string]json.RawMessage, len(c.Servers))
	for name, s := range c.Servers {
		all[name] = s.definition()
	}
	b, err := json.Marshal(all)
	if err == nil {
		b, err = Canonical(b)
	}
	if err != nil {
		// Raw comes from a parsed file or from Load itself; it is valid.
		panic(fmt.Sprintf("config: schema hash: %v", err))
	}
	return SchemaHash(hexSum(b, 16))
}

// Hash is the ServerHash of the server's definition: the first 16 hex digits
// of SHA-256 over the canonical JSON of Raw (variables unexpanded, so secrets
// never enter a hash) without its top-level "mcpx" key, and with "dir" set
// to Dir for a stdio server. Sharing, timeouts, tool filters and
// descriptions therefore do not invalidate cached schemas or pools; what the
// server is, how it is started and where it runs does: the same entry in two
// projects is two servers (`.` means another directory in each).
func (s *Server) Hash() ServerHash {
	m := s.definition()
	delete(m, "mcpx")
	b, err := json.Marshal(m)
	if err == nil {
		b, err = Canonical(b)
	}
	if err != nil {
		panic(fmt.Sprintf("config: server %q: hash: %v", s.Name, err))
	}
	return ServerHash(hexSum(b, 16))
}

// definition is what the hashes are computed over: Raw as an object, with
// "dir" set to Dir when the server is started as a command (a "dir" key
// written in the entry, unknown to mcpx and ignored, is replaced).
func (s *Server) definition() map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(s.raw(), &m); err != nil {
		panic(fmt.Sprintf("config: server %q: hash: %v", s.Name, err))
	}
	if s.Dir != "" && s.URL == "" {
		m["dir"], _ = json.Marshal(s.Dir)
	}
	return m
}

// raw is Raw, or for a Server built in code without one (tests, callers
// outside Load) its fields as JSON, so hashing never fails.
func (s *Server) raw() json.RawMessage {
	if json.Valid(s.Raw) && bytes.HasPrefix(bytes.TrimSpace(s.Raw), []byte("{")) {
		return s.Raw
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("config: server %q: encode: %v", s.Name, err))
	}
	return b
}

// Names returns the server names, sorted.
func (c *Config) Names() []string { return slices.Sorted(maps.Keys(c.Servers)) }

// Vars returns every ${VAR} the config's servers reference, sorted,
// deduplicated. Servers that may not start (untrusted, unusable) are left
// out: nothing of the caller's environment is captured for them.
func (c *Config) Vars() []string {
	var out []string
	for _, s := range c.Servers {
		if s.Untrusted != "" || s.Problem != "" {
			continue
		}
		out = append(out, s.Vars()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
