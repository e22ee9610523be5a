package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// doc is one parsed JSONC file. clean is the source with comments, trailing
// commas and a byte-order mark blanked out by spaces (newlines kept), so
// every byte offset in clean is the same offset in src and clean is valid
// JSON once it parses.
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
	if off > len(d.src) {
		off = len(d.src)
	}
	if off < 0 {
		off = 0
	}
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

// parseJSONC parses src (named file in errors) as JSON with `//` and `/* */`
// comments and trailing commas. The top level must be an object.
func parseJSONC(file string, src []byte) (*doc, error) {
	d := &doc{file: file, src: src}
	clean, open := blank(src)
	if open >= 0 {
		return nil, d.errAt(open, ErrSyntax, "unterminated /* comment")
	}
	d.clean = clean
	var probe any
	if err := json.Unmarshal(clean, &probe); err != nil {
		return nil, d.syntaxError(err)
	}
	p := &walker{b: clean}
	d.root = p.value()
	if d.root.kind != '{' {
		return nil, d.errAt(d.root.start, ErrType, "the top level must be a JSON object")
	}
	return d, nil
}

// syntaxError maps an encoding/json error on d.clean to a positioned error.
func (d *doc) syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		if off >= len(d.clean) {
			// Unexpected end of input: point just past the last
			// significant character.
			off = len(bytes.TrimRight(d.clean, " \t\r\n"))
		} else if off > 0 {
			// Offset counts the offending byte; point at it.
			off--
		}
		return d.errAt(off, ErrSyntax, "%s", se.Error())
	}
	return d.errAt(0, ErrSyntax, "%s", err.Error())
}

// blank returns a copy of src with comments, trailing commas and a leading
// byte-order mark replaced by spaces, newlines preserved. open is the offset
// of an unterminated block comment, or -1.
func blank(src []byte) (b []byte, open int) {
	b = bytes.Clone(src)
	if bytes.HasPrefix(b, bom) {
		copy(b, "   ")
	}
	space := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = ' '
			}
		}
	}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			i++
			for i < len(b) && b[i] != '"' && b[i] != '\n' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			end := bytes.IndexByte(b[i:], '\n')
			if end < 0 {
				end = len(b) - i
			}
			space(i, i+end)
			i += end
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return nil, i
			}
			space(i, i+2+end+2)
			i += 2 + end + 1
		}
	}
	// Trailing commas: a comma after a value whose next significant byte
	// closes the container (",," or "[," stay, so encoding/json reports
	// them). Strings are skipped so commas inside them stay.
	var prev byte
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			i++
			for i < len(b) && b[i] != '"' && b[i] != '\n' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
		case c == ',':
			j := i + 1
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			afterValue := prev != ',' && prev != '{' && prev != '[' && prev != ':' && prev != 0
			if afterValue && j < len(b) && (b[j] == '}' || b[j] == ']') {
				b[i] = ' '
				continue // prev stays the value's last byte
			}
		case isSpace(c):
			continue
		}
		prev = b[min(i, len(b)-1)]
	}
	return b, -1
}

// bom is the UTF-8 byte-order mark some editors write at the start of a file.
var bom = []byte("\xef\xbb\xbf")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// walker records the structure of JSON already known to be valid.
type walker struct {
	b []byte
	i int
}

func (w *walker) skip() {
	for w.i < len(w.b) && (isSpace(w.b[w.i]) || w.b[w.i] == ',' || w.b[w.i] == ':') {
		w.i++
	}
}

func (w *walker) value() *node {
	w.skip()
	n := &node{start: w.i}
	switch c := w.b[w.i]; c {
	case '{':
		n.kind = '{'
		w.i++
		for w.skip(); w.b[w.i] != '}'; w.skip() {
			keyStart := w.i
			w.str()
			var name string
			_ = json.Unmarshal(w.b[keyStart:w.i], &name) // valid by construction
			n.members = append(n.members, member{name: name, keyStart: keyStart, val: w.value()})
		}
		w.i++
	case '[':
		n.kind = '['
		w.i++
		for w.skip(); w.b[w.i] != ']'; w.skip() {
			n.elems = append(n.elems, w.value())
		}
		w.i++
	case '"':
		n.kind = '"'
		w.str()
	default:
		n.kind = '0'
		for w.i < len(w.b) && !isSpace(w.b[w.i]) && !bytes.ContainsRune([]byte(",]}:"), rune(w.b[w.i])) {
			w.i++
		}
	}
	n.end = w.i
	return n
}

// str advances past a string starting at w.i.
func (w *walker) str() {
	w.i++
	for w.b[w.i] != '"' {
		if w.b[w.i] == '\\' {
			w.i++
		}
		w.i++
	}
	w.i++
}
