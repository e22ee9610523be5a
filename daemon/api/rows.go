package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The brief tool list (GET /v1/tools?ns=NS&brief=1, what `mcpx ls NS`
// shows) is application/x-ndjson: a first line {"namespace": Namespace},
// then one line per tool, ["name","summary"] (Summary of its description),
// in the server's order. A listing of 10,000 tools is then read without
// reflection: each row is two JSON strings, and a string without escapes is
// used as it stands.

// ToolRows is a brief tool list.
type ToolRows struct {
	Namespace Namespace
	Rows      []ToolRow
}

// ToolRow is one tool of a brief list: its name and the Summary of its
// description.
type ToolRow struct{ Name, Summary string }

// AppendToolRow appends the row of one tool (with its newline) to b.
func AppendToolRow(b []byte, name, summary string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode([2]string{name, summary}) // strings always encode
	return append(b, buf.Bytes()...)
}

// DecodeToolRows reads a brief tool list. The strings of the result share
// data's memory: the caller must not change data afterwards.
func DecodeToolRows(data []byte) (*ToolRows, error) {
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	h, _, err := decodeKnown(head, readRowsHead)
	if err != nil {
		return nil, fmt.Errorf("tool rows: first line: %w", err)
	}
	if h.Namespace == nil {
		return nil, errors.New("tool rows: first line has no namespace")
	}
	r := &ToolRows{Namespace: *h.Namespace, Rows: make([]ToolRow, 0, bytes.Count(rest, []byte("\n")))}
	// The rows' strings are slices of data, which the caller hands over:
	// no copy of a listing that may run to megabytes.
	s := unsafe.String(unsafe.SliceData(rest), len(rest))
	for line := 1; s != ""; line++ {
		var row string
		var ok bool
		row, s, ok = cut(s, '\n')
		if !ok {
			return nil, fmt.Errorf("tool rows: line %d: not terminated", line+1)
		}
		name, summary, err := decodeRow(row)
		if err != nil {
			return nil, fmt.Errorf("tool rows: line %d: %w", line+1, err)
		}
		r.Rows = append(r.Rows, ToolRow{Name: name, Summary: summary})
	}
	return r, nil
}

// rowsHead is the first line of a brief tool list.
type rowsHead struct {
	Namespace *Namespace `json:"namespace"`
}

// readRowsHead reads a rowsHead without encoding/json's reflection
// (scananswers.go).
func readRowsHead(s string, h *rowsHead) error {
	return members(s, once([]string{"namespace"}, func(key, v string) error {
		if key != "namespace" {
			return unknownKey(key, "namespace")
		}
		if v == "null" {
			return errOtherShape
		}
		h.Namespace = &Namespace{}
		return readNamespace(v, h.Namespace)
	}))
}

func cut(s string, sep byte) (before, after string, found bool) {
	if i := strings.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// decodeRow reads ["name","summary"] (no other whitespace: what
// AppendToolRow writes).
func decodeRow(row string) (name, summary string, err error) {
	if len(row) < 2 || row[0] != '[' || row[len(row)-1] != ']' {
		return "", "", errors.New("want [\"name\",\"description\"]")
	}
	name, rest, err := jsonString(row[1 : len(row)-1])
	if err != nil {
		return "", "", err
	}
	if len(rest) == 0 || rest[0] != ',' {
		return "", "", errors.New("want two strings")
	}
	summary, rest, err = jsonString(rest[1:])
	if err != nil {
		return "", "", err
	}
	if rest != "" {
		return "", "", errors.New("want two strings")
	}
	return name, summary, nil
}

// jsonString reads the JSON string at the start of s and returns its value
// and what follows. A string of plain characters (no escape, no control
// character, valid UTF-8) is the slice between its quotes; anything else is
// read by encoding/json.
func jsonString(s string) (string, string, error) {
	if s == "" || s[0] != '"' {
		return "", "", errors.New("want a string")
	}
	// A short plain string (a name, a state: most keys and values) is
	// found by its closing quote and a look at each of its few bytes;
	// the loop below costs it about four times as much.
	if q := strings.IndexByte(s[1:min(len(s), 1+shortString)], '"'); q >= 0 && plainASCII(s[1:1+q]) {
		return s[1 : 1+q], s[2+q:], nil
	}
	plain, ascii := true, true
	for i := 1; i < len(s); {
		// Eight plain bytes at a time; when eight are not all plain, a
		// byte to look at is among them: byte by byte up to it (testing
		// eight again at each byte would cost more than the bytes).
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		for i < len(s) && s[i] < utf8.RuneSelf && !notPlain[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		switch c := s[i]; {
		case c == '"':
			tok := s[:i+1]
			if plain && (ascii || utf8.ValidString(tok)) {
				return s[1:i], s[i+1:], nil
			}
			var v string
			if err := json.Unmarshal([]byte(tok), &v); err != nil {
				return "", "", err
			}
			return v, s[i+1:], nil
		case c == '\\':
			plain = false
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			plain = false
		default: // c >= utf8.RuneSelf
			ascii = false
		}
		i++
	}
	return "", "", errors.New("unterminated string")
}

// shortString is how far jsonString looks for the end of a short string.
const shortString = 24

// plainASCII reports whether s holds no backslash, control character or
// byte outside ASCII.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plain8 reports whether none of the 8 bytes of s is a quote, a backslash,
// a control character or outside ASCII (the SWAR tests of "Bit Twiddling
// Hacks": a byte less than n, a byte equal to c).
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := func(x uint64, n uint64) uint64 { return (x - ones*n) & ^x & highs }
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (x&highs)|less(x, 0x20)|zero(x^(ones*'"'))|zero(x^(ones*'\\')) == 0
}

// notPlain marks the ASCII bytes jsonString must look at: the quote, the
// backslash and control characters.
var notPlain = [utf8.RuneSelf]bool{
	'"': true, '\\': true,
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
	0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true,
}
