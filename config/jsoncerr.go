package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Positions of JSONC errors. hujson says where it stopped only inside its
// message (a byte column, no offset), and nothing may be read out of an
// error's text, so a file hujson refuses is looked at once more the way
// encoding/json sees it: comments and trailing commas blanked by a scan
// that needs no valid input, then encoding/json's *SyntaxError names the
// offending byte and says what is wrong in words people know. This runs
// only for a file that does not parse (and for one that could nest deeper
// than encoding/json allows, see maxDepth). The same scan finds the
// comments JSONC allows but hujson refuses; they are blanked in the copy
// hujson parses.

// maxDepth is encoding/json's bound on nesting. A file that could nest
// deeper is checked against it before hujson, whose parser recurses
// without a bound.
const maxDepth = 10000

// mayNestTooDeep reports whether src has enough brackets to nest deeper
// than maxDepth (most files do not, and are not scanned twice).
func mayNestTooDeep(src []byte) bool {
	return bytes.Count(src, []byte{'['})+bytes.Count(src, []byte{'{'}) > maxDepth
}

// syntaxError is the *ParseError of d.src at the first byte that is not
// JSONC, or nil when there is none. Then lax lists the comments hujson
// refuses though JSONC allows them (invalid UTF-8, a line separator in a
// line comment), as ranges of d.src.
func (d *doc) syntaxError() (lax [][2]int, perr *ParseError) {
	b, open, lax := blankJSONC(d.src)
	if open >= 0 {
		return nil, d.errAt(open, ErrSyntax, "unterminated /* comment")
	}
	if json.Valid(b) {
		return lax, nil
	}
	var probe any
	err := json.Unmarshal(b, &probe)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return nil, d.errAt(0, ErrSyntax, "%v", err)
	}
	off := int(se.Offset)
	if off >= len(b) {
		// Unexpected end of input: point just past the last significant
		// character.
		off = len(bytes.TrimRight(b, " \t\r\n"))
	} else if off > 0 {
		off-- // Offset counts the offending byte; point at it.
	}
	return nil, d.errAt(off, ErrSyntax, "%s", se.Error())
}

// blankJSONC returns a copy of src with a leading byte-order mark, the
// comments and the trailing commas replaced by spaces, newlines kept; open
// is the offset of an unterminated block comment (else -1), lax the
// comments hujson refuses.
func blankJSONC(src []byte) (b []byte, open int, lax [][2]int) {
	b = bytes.Clone(src)
	if bytes.HasPrefix(b, bom) {
		copy(b, "   ")
	}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			i = stringEnd(b, i)
		case b[i] == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
			end := commentEnd(b, i)
			if end < 0 {
				return nil, i, nil
			}
			if !hujsonTakes(b[i:end]) {
				lax = append(lax, [2]int{i, end})
			}
			spaces(b[i:end])
			i = end - 1
		}
	}
	blankTrailingCommas(b)
	return b, -1, lax
}

// stringEnd is the offset of the quote closing the string that starts at
// b[i] (or of the line's end, for a string left open).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b) && b[i] != '"' && b[i] != '\n'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i
}

// commentEnd is the offset just past the comment that starts at b[i]
// (before the newline of a line comment), or -1 for a block comment left
// open.
func commentEnd(b []byte, i int) int {
	if b[i+1] == '*' {
		n := bytes.Index(b[i+2:], []byte("*/"))
		if n < 0 {
			return -1
		}
		return i + 2 + n + 2
	}
	if n := bytes.IndexByte(b[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(b)
}

// hujsonTakes reports whether hujson accepts comment c: valid UTF-8, and
// in a line comment no line separator.
func hujsonTakes(c []byte) bool {
	return utf8.Valid(c) && (c[1] == '*' || !bytes.ContainsRune(c, '\u2028') && !bytes.ContainsRune(c, '\u2029'))
}

// spaces blanks b but its line breaks.
func spaces(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}

// blankTrailingCommas blanks each comma after a value whose next
// significant byte closes the container (",," and "[," stay, so
// encoding/json reports them). Strings are skipped so commas inside them
// stay.
func blankTrailingCommas(b []byte) {
	var prev byte // the last significant byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			i = stringEnd(b, i)
		case c == ',' && afterValue(prev) && closesNext(b[i+1:]):
			b[i] = ' '
			continue // prev stays the value's last byte
		case isSpace(c):
			continue
		}
		prev = b[min(i, len(b)-1)]
	}
}

// afterValue reports whether a comma after the significant byte prev
// follows a value.
func afterValue(prev byte) bool {
	return prev != ',' && prev != '{' && prev != '[' && prev != ':' && prev != 0
}

// closesNext reports whether the first significant byte of b closes a
// container.
func closesNext(b []byte) bool {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i < len(b) && (b[i] == '}' || b[i] == ']')
}
