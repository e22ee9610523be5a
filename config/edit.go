package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Editing mcpx's own files (`mcpx config add/remove/import`). Edits are
// minimal: the new member's text is inserted, or the removed member's text
// cut out, at the offsets the JSONC scanner found, so the rest of the file
// (comments, layout, other keys) stays as the user wrote it.

// ErrServerExists is adding a name the file already defines (without
// force).
var ErrServerExists = errors.New("server already defined")

// ErrNoServer is removing a name the file does not define.
var ErrNoServer = errors.New("no such server")

// EntryJSON is a server entry as mcpx writes it, keys in the order people
// read them. Its mcpx block holds what the entry itself set (its own block,
// or a host's keys mapped to it: tool filters, timeouts, description), not
// the defaults it inherits.
func EntryJSON(s *Server) any {
	type block struct {
		Sharing         string   `json:"sharing,omitempty"`
		Scope           string   `json:"scope,omitempty"`
		Max             int      `json:"max,omitempty"`
		IdleTimeout     Duration `json:"idleTimeout,omitempty"`
		StartTimeout    Duration `json:"startTimeout,omitempty"`
		CallTimeout     Duration `json:"callTimeout,omitempty"`
		MaxMessageBytes int64    `json:"maxMessageBytes,omitempty"`
		Tools           []string `json:"tools,omitempty"`
		ExcludeTools    []string `json:"excludeTools,omitempty"`
		Description     string   `json:"description,omitempty"`
		Policy          *Policy  `json:"policy,omitempty"`
		Auth            *Auth    `json:"auth,omitempty"`
	}
	type entry struct {
		Command   string            `json:"command,omitempty"`
		Args      []string          `json:"args,omitempty"`
		Cwd       string            `json:"cwd,omitempty"`
		Env       map[string]string `json:"env,omitempty"`
		URL       string            `json:"url,omitempty"`
		Transport string            `json:"transport,omitempty"`
		Headers   map[string]string `json:"headers,omitempty"`
		MCPX      *block            `json:"mcpx,omitempty"`
	}
	e := entry{Command: s.Command, Args: s.Args, Cwd: s.Cwd, Env: s.Env, URL: s.URL, Headers: s.Headers}
	if s.URL != "" && s.Transport == TransportSSE {
		e.Transport = TransportSSE
	}
	o := s.own.over(Options{})
	b := block{Sharing: o.Sharing, Scope: o.Scope, Max: o.Max, IdleTimeout: o.IdleTimeout, StartTimeout: o.StartTimeout,
		CallTimeout: o.CallTimeout, MaxMessageBytes: o.MaxMessageBytes, Tools: o.Tools, ExcludeTools: o.ExcludeTools,
		Description: o.Description, Auth: o.Auth}
	if o.Policy != (Policy{}) {
		b.Policy = &o.Policy
	}
	if j, _ := json.Marshal(b); string(j) != "{}" {
		e.MCPX = &b
	}
	return e
}

// AddServer returns src (a JSONC mcpx config, or empty) with server name
// set to entry under "mcpServers". An existing name is ErrServerExists
// unless force, which replaces its value in place.
func AddServer(file string, src []byte, name string, entry any, force bool) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		val, err := indentJSON(entry, "    ")
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, "{\n  \"mcpServers\": {\n    %s: %s\n  }\n}\n", quote(name), val), nil
	}
	d, err := parseJSONC(file, src)
	if err != nil {
		return nil, err
	}
	servers := d.member(d.root, formatMCPServers)
	if servers == nil {
		// A new "mcpServers" member, first in the top-level object.
		val, err := indentJSON(map[string]any{name: entry}, "  ")
		if err != nil {
			return nil, err
		}
		ins := "\n  \"mcpServers\": " + string(val)
		if len(d.root.members) > 0 {
			ins += ","
		}
		return splice(src, d.root.start+1, d.root.start+1, ins), nil
	}
	if servers.val.kind != '{' {
		return nil, d.errAt(servers.val.start, ErrType, "%q must be an object of servers", formatMCPServers)
	}
	obj := servers.val
	indent := d.indentOf(servers.keyStart) + "  "
	if m := d.member(obj, name); m != nil {
		if !force {
			return nil, fmt.Errorf("%s: server %q: %w (pass --force to replace it)", d.where(m.keyStart), name, ErrServerExists)
		}
		val, err := indentJSON(entry, d.indentOf(m.keyStart))
		if err != nil {
			return nil, err
		}
		return splice(src, m.val.start, m.val.end, string(val)), nil
	}
	if len(obj.members) > 0 {
		indent = d.indentOf(obj.members[0].keyStart)
	}
	val, err := indentJSON(entry, indent)
	if err != nil {
		return nil, err
	}
	if len(obj.members) == 0 {
		closeIndent := d.indentOf(servers.keyStart)
		return splice(src, obj.start+1, obj.end-1, "\n"+indent+quote(name)+": "+string(val)+"\n"+closeIndent), nil
	}
	last := obj.members[len(obj.members)-1]
	return splice(src, last.val.end, last.val.end, ",\n"+indent+quote(name)+": "+string(val)), nil
}

// RemoveServer returns src without server name (looked for under
// "mcpServers", "servers" and "mcp").
func RemoveServer(file string, src []byte, name string) ([]byte, error) {
	d, err := parseJSONC(file, src)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{formatMCPServers, formatServers, formatOpencode} {
		servers := d.member(d.root, key)
		if servers == nil || servers.val.kind != '{' {
			continue
		}
		members := servers.val.members
		for i, m := range members {
			if m.name != name {
				continue
			}
			from, to := m.keyStart, m.val.end
			if i+1 < len(members) {
				// Through the comma after the value and the rest of
				// its line.
				to = d.after(m.val.end, ',')
				to = d.lineEnd(to)
				from = d.lineStartIfBlank(from)
			} else if i > 0 {
				// The last member: from the comma after the previous
				// value.
				from = d.after(members[i-1].val.end, ',') - 1
				if next := d.after(m.val.end, ','); next > m.val.end {
					to = next // a trailing comma goes too
				}
			} else {
				from = d.lineStartIfBlank(from)
				to = d.lineEnd(d.after(m.val.end, ','))
			}
			out := splice(src, from, to, "")
			if _, err := parseJSONC(file, out); err != nil {
				return nil, fmt.Errorf("remove server %q from %s: the edit would not parse (%v); edit the file by hand", name, file, err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: server %q: %w", file, name, ErrNoServer)
}

// member finds key in object n.
func (d *doc) member(n *node, key string) *member {
	for i := range n.members {
		if n.members[i].name == key {
			return &n.members[i]
		}
	}
	return nil
}

// indentOf is the whitespace that starts the line holding off.
func (d *doc) indentOf(off int) string {
	start := bytes.LastIndexByte(d.src[:off], '\n') + 1
	end := start
	for end < off && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[start:end])
}

// after returns the offset just past the first significant byte at or
// after off if it is c (comments are blank in clean), else off.
func (d *doc) after(off int, c byte) int {
	i := off
	for i < len(d.clean) && isSpace(d.clean[i]) {
		i++
	}
	if i < len(d.clean) && d.src[i] == c {
		return i + 1
	}
	return off
}

// lineEnd extends off past trailing blanks and one newline when only
// blanks (or a comment) follow on the line.
func (d *doc) lineEnd(off int) int {
	i := off
	for i < len(d.clean) && (d.clean[i] == ' ' || d.clean[i] == '\t' || d.clean[i] == '\r') {
		i++
	}
	if i < len(d.clean) && d.clean[i] == '\n' && bytes.Equal(bytes.TrimSpace(d.src[off:i]), bytes.TrimSpace(d.clean[off:i])) {
		return i + 1
	}
	return off
}

// lineStartIfBlank moves off back to its line's start when only blanks
// precede it there.
func (d *doc) lineStartIfBlank(off int) int {
	start := bytes.LastIndexByte(d.src[:off], '\n') + 1
	if len(bytes.TrimSpace(d.src[start:off])) == 0 {
		return start
	}
	return off
}

func splice(src []byte, from, to int, ins string) []byte {
	out := make([]byte, 0, len(src)+len(ins))
	out = append(out, src[:from]...)
	out = append(out, ins...)
	return append(out, src[to:]...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// indentJSON is v as indented JSON whose inner lines start with prefix.
func indentJSON(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WriteConfigFile replaces path with content through a temporary file and
// a rename (the mode of an existing file is kept; a new file is 0644).
func WriteConfigFile(path string, content []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(filepath.Base(path), ".")+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
