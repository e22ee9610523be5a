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

	"github.com/tailscale/hujson"
)

// Editing mcpx's own files (`mcpx config add/remove/import`). Edits are
// minimal: hujson's syntax tree says where each member, comma and comment
// is, and the new member's text is inserted, or the removed member's text
// cut out, of the file as read, so the rest of it (comments, layout, line
// endings, other keys) stays byte for byte as the user wrote it.

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
// unless force, which replaces its value in place. A new server goes after
// the last one, past the comments on that one's line; it takes the
// indentation of the first server, and the file's trailing commas and
// line endings.
func AddServer(file string, src []byte, name string, entry any, force bool) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		val, err := indentJSON(entry, "    ", "\n")
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, "{\n  \"mcpServers\": {\n    %s: %s\n  }\n}\n", quote(name), val), nil
	}
	e, err := editing(file, src)
	if err != nil {
		return nil, err
	}
	i := e.find(e.top, formatMCPServers)
	if i < 0 {
		return e.addServerMap(name, entry)
	}
	servers := &e.top.Members[i]
	obj, ok := servers.Value.Value.(*hujson.Object)
	if !ok {
		return nil, e.errAt(servers.Value.StartOffset, ErrType, "%q must be an object of servers", formatMCPServers)
	}
	if j := e.find(obj, name); j >= 0 {
		m := &obj.Members[j]
		if !force {
			return nil, fmt.Errorf("%s: server %q: %w (pass --force to replace it)", e.where(m.Name.StartOffset), name, ErrServerExists)
		}
		val, err := indentJSON(entry, e.indentOf(m.Name.StartOffset), e.nl)
		if err != nil {
			return nil, err
		}
		return splice(src, m.Value.StartOffset, m.Value.EndOffset, string(val)), nil
	}
	if len(obj.Members) == 0 {
		return e.addFirst(servers, obj, name, entry)
	}
	return e.addLast(obj, name, entry)
}

// addServerMap adds a "mcpServers" member holding name, first in the
// top-level object.
func (e *editor) addServerMap(name string, entry any) ([]byte, error) {
	val, err := indentJSON(map[string]any{name: entry}, "  ", e.nl)
	if err != nil {
		return nil, err
	}
	ins := e.nl + "  \"mcpServers\": " + string(val)
	if len(e.top.Members) > 0 {
		ins += ","
	} else {
		ins += e.nl
	}
	open := e.tree.StartOffset + 1
	return splice(e.src, open, open, ins), nil
}

// addFirst puts name into the empty server map of servers, after the
// comments on the line of its opening brace.
func (e *editor) addFirst(servers *hujson.ObjectMember, obj *hujson.Object, name string, entry any) ([]byte, error) {
	outer := e.indentOf(servers.Name.StartOffset)
	indent := outer + "  "
	val, err := indentJSON(entry, indent, e.nl)
	if err != nil {
		return nil, err
	}
	member := indent + quote(name) + ": " + string(val)
	open := servers.Value.StartOffset + 1
	if n := lineEndIn(obj.AfterExtra); n >= 0 {
		return splice(e.src, open+n, open+n, member+e.nl), nil
	}
	return splice(e.src, open, open, e.nl+member+e.nl+outer), nil
}

// addLast puts name after the last member of obj (which has members),
// past the comments on that member's line.
func (e *editor) addLast(obj *hujson.Object, name string, entry any) ([]byte, error) {
	indent := e.indentOf(obj.Members[0].Name.StartOffset)
	val, err := indentJSON(entry, indent, e.nl)
	if err != nil {
		return nil, err
	}
	member := quote(name) + ": " + string(val)
	last := obj.Members[len(obj.Members)-1].Value
	if last.AfterExtra != nil {
		// A trailing comma: the new member has one too.
		comma := last.EndOffset + len(last.AfterExtra)
		if n := lineEndIn(obj.AfterExtra); n >= 0 {
			at := comma + 1 + n
			return splice(e.src, at, at, indent+member+","+e.nl), nil
		}
		return splice(e.src, comma+1, comma+1, " "+member+","), nil
	}
	// The comma goes right after the last value, the member after the
	// rest of its line (the parser gave that to the object: obj.AfterExtra
	// starts at the last value's end).
	out := splice(e.src, last.EndOffset, last.EndOffset, ",")
	if n := lineEndIn(obj.AfterExtra); n >= 0 {
		at := last.EndOffset + 1 + n
		return splice(out, at, at, indent+member+e.nl), nil
	}
	at := last.EndOffset + 1
	return splice(out, at, at, " "+member), nil
}

// RemoveServer returns src without server name (looked for under
// "mcpServers", "servers" and "mcp"). The member's own text goes (its line,
// when it has one to itself), and with it the comma that separated it;
// every comment outside the member stays.
func RemoveServer(file string, src []byte, name string) ([]byte, error) {
	e, err := editing(file, src)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{formatMCPServers, formatServers, formatOpencode} {
		i := e.find(e.top, key)
		if i < 0 {
			continue
		}
		obj, ok := e.top.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			continue
		}
		if j := e.find(obj, name); j >= 0 {
			out := e.remove(obj, j)
			if _, err := parseJSONC(file, out); err != nil {
				return nil, fmt.Errorf("remove server %q from %s: the edit would not parse (%v); edit the file by hand", name, file, err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: server %q: %w", file, name, ErrNoServer)
}

// remove cuts member j out of obj.
func (e *editor) remove(obj *hujson.Object, j int) []byte {
	m := obj.Members[j].Value
	from, to := obj.Members[j].Name.StartOffset, m.EndOffset
	last := j == len(obj.Members)-1
	if !last || m.AfterExtra != nil {
		to += len(m.AfterExtra) + 1 // through its comma
	}
	switch ownLine := blankBefore(e.src, from); {
	case ownLine && blankAfter(e.src, to):
		from, to = lineStart(e.src, from), lineEnd(e.src, to)
	case ownLine || !last:
		to = skipBlanks(e.src, to) // what follows takes its place
	default:
		for from > 0 && (e.src[from-1] == ' ' || e.src[from-1] == '\t') {
			from-- // the blanks between the comma and the last member
		}
	}
	out := splice(e.src, from, to, "")
	if last && j > 0 && m.AfterExtra == nil {
		// The member before is the last now: its comma goes too.
		prev := obj.Members[j-1].Value
		comma := prev.EndOffset + len(prev.AfterExtra)
		out = splice(out, comma, comma+1, "")
	}
	return out
}

// editor is a file being edited: its syntax tree, whose offsets are
// those of src, and the line ending it uses.
type editor struct {
	*doc
	tree hujson.Value
	top  *hujson.Object // the top-level object
	nl   string
}

func editing(file string, src []byte) (*editor, error) {
	d, tree, _, err := parseTree(file, src)
	if err != nil {
		return nil, err
	}
	e := &editor{doc: d, tree: tree, top: tree.Value.(*hujson.Object), nl: "\n"}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		e.nl = "\r\n"
	}
	return e, nil
}

// find is the index of key among o's members, or -1.
func (e *editor) find(o *hujson.Object, key string) int {
	for i := range o.Members {
		if literalString(o.Members[i].Name.Value.(hujson.Literal)) == key {
			return i
		}
	}
	return -1
}

// indentOf is the whitespace that starts the line holding off.
func (e *editor) indentOf(off int) string {
	start := lineStart(e.src, off)
	end := start
	for end < off && (e.src[end] == ' ' || e.src[end] == '\t') {
		end++
	}
	return string(e.src[start:end])
}

// lineEndIn is the offset just past the first line break of extra
// (whitespace and comments) that is not inside a comment, or -1.
func lineEndIn(extra hujson.Extra) int {
	for i := 0; i < len(extra); i++ {
		switch {
		case extra[i] == '\n':
			return i + 1
		case bytes.HasPrefix(extra[i:], []byte("//")):
			if n := bytes.IndexByte(extra[i:], '\n'); n >= 0 {
				return i + n + 1
			}
			return -1
		case bytes.HasPrefix(extra[i:], []byte("/*")):
			i += 2 + bytes.Index(extra[i+2:], []byte("*/")) + 1
		}
	}
	return -1
}

// lineStart is the offset of the start of off's line.
func lineStart(src []byte, off int) int { return bytes.LastIndexByte(src[:off], '\n') + 1 }

// blankBefore reports whether only blanks precede off on its line.
func blankBefore(src []byte, off int) bool {
	return len(bytes.Trim(src[lineStart(src, off):off], " \t")) == 0
}

// skipBlanks is the offset past the spaces and tabs at off.
func skipBlanks(src []byte, off int) int {
	for off < len(src) && (src[off] == ' ' || src[off] == '\t') {
		off++
	}
	return off
}

// blankAfter reports whether only blanks follow off on its line.
func blankAfter(src []byte, off int) bool {
	i := skipBlanks(src, off)
	return i == len(src) || src[i] == '\n' || src[i] == '\r'
}

// lineEnd is the offset past the line break that ends off's line (only
// blanks between), or len(src).
func lineEnd(src []byte, off int) int {
	i := skipBlanks(src, off)
	if i < len(src) && src[i] == '\r' {
		i++
	}
	if i < len(src) && src[i] == '\n' {
		i++
	}
	return i
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

// indentJSON is v as indented JSON whose inner lines start with prefix and
// end with nl.
func indentJSON(v any, prefix, nl string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if nl != "\n" {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte(nl))
	}
	return b, nil
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
