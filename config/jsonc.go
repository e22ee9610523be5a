package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// JSONC is read with hujson (github.com/tailscale/hujson), which parses
// JSON with comments and trailing commas into a syntax tree that keeps
// every byte, with offsets. Loading sees that tree as nodes (below) over
// a standard-JSON copy of the file; edits (edit.go) find in the tree
// where to cut and insert, and splice the file itself, so comments and
// layout stay as written.

// doc is one parsed JSONC file. clean is the source with comments, trailing
// commas and a byte-order mark blanked out by spaces (newlines kept), so
// every byte offset in clean is the same offset in src and clean is valid
// JSON.
type doc struct {
	file  string
	src   []byte
	clean []byte
	root  *node
}

// node is a JSON value with its byte span in doc.clean.
type node struct {
	kind       byte // '{', '[', '"', or '0' for numbers, true, false, null
	start, end int
	members    []member // objects, in source order
	elems      []*node  // arrays
}

// member is one key of an object.
type member struct {
	name     string
	keyStart int
	val      *node
}

// raw is the value's bytes as written (comments blanked).
func (d *doc) raw(n *node) json.RawMessage { return json.RawMessage(d.clean[n.start:n.end]) }

// pos converts a byte offset to a 1-based line and a 1-based column counted
// in characters.
func (d *doc) pos(off int) (line, col int) {
	off = min(max(off, 0), len(d.src))
	lineStart := bytes.LastIndexByte(d.src[:off], '\n') + 1
	if lineStart == 0 && bytes.HasPrefix(d.src, bom) && off >= len(bom) {
		lineStart = len(bom) // editors do not show the byte-order mark
	}
	line = bytes.Count(d.src[:off], []byte{'\n'}) + 1
	col = utf8.RuneCount(d.src[lineStart:off]) + 1
	return line, col
}

// errAt builds a *ParseError of the given kind at a byte offset.
func (d *doc) errAt(off int, kind error, format string, args ...any) *ParseError {
	line, col := d.pos(off)
	return &ParseError{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// where renders "FILE:LINE:COL" for warnings.
func (d *doc) where(off int) string {
	line, col := d.pos(off)
	return fmt.Sprintf("%s:%d:%d", d.file, line, col)
}

// bom is the UTF-8 byte-order mark some editors write at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// parseTree parses src as JSONC: the syntax tree of buf, a copy of src
// whose offsets are src's (a byte-order mark and the comments hujson
// refuses blanked, and a newline added so that a last line comment ends).
// The top level must be an object. A file that does not parse is a
// *ParseError at the offending character (syntaxError).
func parseTree(file string, src []byte) (d *doc, tree hujson.Value, buf []byte, err error) {
	d = &doc{file: file, src: src}
	if mayNestTooDeep(src) {
		if _, perr := d.syntaxError(); perr != nil {
			return nil, tree, nil, perr
		}
	}
	buf = make([]byte, len(src), len(src)+1)
	copy(buf, src)
	if bytes.HasPrefix(buf, bom) {
		copy(buf, "   ")
	}
	buf = append(buf, '\n')
	if tree, err = hujson.Parse(buf); err != nil {
		lax, perr := d.syntaxError()
		if perr != nil {
			return nil, tree, nil, perr
		}
		for _, c := range lax {
			spaces(buf[c[0]:c[1]])
		}
		if tree, err = hujson.Parse(buf); err != nil {
			return nil, tree, nil, d.errAt(0, ErrSyntax, "not JSON with comments: %v", err)
		}
	}
	if tree.Value.Kind() != '{' {
		return nil, tree, nil, d.errAt(tree.StartOffset, ErrType, "the top level must be a JSON object")
	}
	return d, tree, buf, nil
}

// parseJSONC parses src (named file in errors) as JSON with `//` and `/* */`
// comments and trailing commas, into nodes over clean.
func parseJSONC(file string, src []byte) (*doc, error) {
	d, tree, buf, err := parseTree(file, src)
	if err != nil {
		return nil, err
	}
	v := viewer{buf: buf}
	d.root = v.view(&tree)
	d.clean = buf[:len(src)]
	return d, nil
}

// standardJSON is src (JSONC) as standard JSON at the same offsets.
func standardJSON(file string, src []byte) (*doc, error) {
	d, tree, buf, err := parseTree(file, src)
	if err != nil {
		return nil, err
	}
	v := viewer{buf: buf, blankOnly: true}
	v.view(&tree)
	d.clean = buf[:len(src)]
	return d, nil
}

// viewer walks a syntax tree once: it blanks, in buf (the bytes the tree
// was parsed from), every comment and trailing comma, keeping newlines, so
// that buf is standard JSON at the same offsets; and unless blankOnly it
// makes the nodes, taken from a slab to spare the allocator.
type viewer struct {
	buf       []byte
	blankOnly bool
	slab      []node
}

func (w *viewer) node() *node {
	if len(w.slab) == 0 {
		w.slab = make([]node, 64)
	}
	n := &w.slab[0]
	w.slab = w.slab[1:]
	return n
}

// view blanks v's comments and returns its node (nil when blankOnly).
func (w *viewer) view(v *hujson.Value) *node {
	blankExtra(w.buf, v.StartOffset-len(v.BeforeExtra), v.BeforeExtra)
	blankExtra(w.buf, v.EndOffset, v.AfterExtra)
	var n *node
	if !w.blankOnly {
		n = w.node()
		n.start, n.end, n.kind = v.StartOffset, v.EndOffset, '0'
	}
	switch t := v.Value.(type) {
	case *hujson.Object:
		w.object(n, t, v.EndOffset-1)
	case *hujson.Array:
		w.array(n, t, v.EndOffset-1)
	case hujson.Literal:
		if n != nil && t.Kind() == '"' {
			n.kind = '"'
		}
	}
	return n
}

func (w *viewer) object(n *node, o *hujson.Object, closing int) {
	if n != nil {
		n.kind = '{'
		n.members = make([]member, len(o.Members))
	}
	for i := range o.Members {
		m := &o.Members[i]
		w.view(&m.Name)
		val := w.view(&m.Value)
		if n != nil {
			n.members[i] = member{name: literalString(m.Name.Value.(hujson.Literal)), keyStart: m.Name.StartOffset, val: val}
		}
	}
	var last *hujson.Value
	if len(o.Members) > 0 {
		last = &o.Members[len(o.Members)-1].Value
	}
	w.close(closing, o.AfterExtra, last)
}

func (w *viewer) array(n *node, a *hujson.Array, closing int) {
	if n != nil {
		n.kind = '['
		n.elems = make([]*node, len(a.Elements))
	}
	for i := range a.Elements {
		el := w.view(&a.Elements[i])
		if n != nil {
			n.elems[i] = el
		}
	}
	var last *hujson.Value
	if len(a.Elements) > 0 {
		last = &a.Elements[len(a.Elements)-1]
	}
	w.close(closing, a.AfterExtra, last)
}

// close blanks what stands before a container's closing bracket: the
// comments there and a trailing comma after the last value.
func (w *viewer) close(closing int, inner hujson.Extra, last *hujson.Value) {
	blankExtra(w.buf, closing-len(inner), inner)
	if last != nil && last.AfterExtra != nil { // a trailing comma
		w.buf[last.EndOffset+len(last.AfterExtra)] = ' '
	}
}

// blankExtra blanks the comments of extra, found at buf[at:].
func blankExtra(buf []byte, at int, extra hujson.Extra) {
	if bytes.IndexByte(extra, '/') < 0 {
		return // whitespace only
	}
	for i, c := range extra {
		if !isSpace(c) {
			buf[at+i] = ' '
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// literalString is a JSON string literal's value. Most are plain text
// between quotes; the rest go through encoding/json.
func literalString(lit []byte) string {
	if len(lit) >= 2 && lit[0] == '"' {
		if s := lit[1 : len(lit)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			return string(s)
		}
	}
	var s string
	_ = json.Unmarshal(lit, &s) // valid: hujson checked it
	return s
}
