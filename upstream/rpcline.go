package upstream

import (
	"bytes"
	"encoding/json"
)

// rpcLine is what tells one JSON-RPC message (one line from a stdio
// server) apart: the raw values of its top-level members id, method,
// result and error, each a slice of the line (nil when absent). Nothing
// nested is decoded; a response's result stays the bytes the server sent.
type rpcLine struct {
	id, method, result, err []byte
}

// maxNesting is encoding/json's bound on nested arrays and objects, kept so
// that the scanner accepts exactly the lines encoding/json does.
const maxNesting = 10000

// scanLine reads line as one JSON object and returns its members id,
// method, result and error. ok is false unless line is valid JSON whose
// value is an object: every nested value is checked (not decoded) on the
// way, so a line the scanner accepts is one encoding/json accepts. Keys
// match exactly (JSON-RPC names are case-sensitive); a member given twice
// counts once, the last, as when decoding into a map.
func scanLine(line []byte) (m rpcLine, ok bool) {
	s := jsonScan{b: line}
	s.space()
	if s.i >= len(line) || line[s.i] != '{' {
		return m, false
	}
	return m, s.object(1, &m) && s.atEnd()
}

// set keeps v when key is one of the members the line is told apart by.
func (m *rpcLine) set(key, v []byte) {
	switch string(key) { // no allocation: the compiler compares in place
	case "id":
		m.id = v
	case "method":
		m.method = v
	case "result":
		m.result = v
	case "error":
		m.err = v
	}
}

// jsonScan walks a JSON text, checking its grammar without building values.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// atEnd reports whether only white space is left.
func (s *jsonScan) atEnd() bool {
	s.space()
	return s.i == len(s.b)
}

// key reads an object's member name: the bytes between the quotes, or
// for the rare name with escapes, the name encoding/json decodes.
func (s *jsonScan) key() ([]byte, bool) {
	start := s.i
	escaped, ok := s.str()
	if !ok {
		return nil, false
	}
	raw := s.b[start:s.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return nil, false
	}
	return []byte(k), true
}

// value checks one JSON value; depth is how many arrays and objects
// enclose it.
func (s *jsonScan) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return depth < maxNesting && s.object(depth+1, nil)
	case c == '[':
		return depth < maxNesting && s.array(depth+1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// object checks an object (s.i at its opening brace). When top is not
// nil the object is a whole line, and the members that tell the line
// apart are kept in top (their names decoded, as encoding/json would).
func (s *jsonScan) object(depth int, top *rpcLine) bool {
	s.i++ // {
	s.space()
	if s.eat('}') {
		return true
	}
	for {
		var key []byte
		ok := false
		if top != nil {
			key, ok = s.key()
		} else {
			_, ok = s.str()
		}
		if !ok {
			return false
		}
		s.space()
		if !s.eat(':') {
			return false
		}
		s.space()
		start := s.i
		if !s.value(depth) {
			return false
		}
		if top != nil {
			top.set(key, s.b[start:s.i])
		}
		s.space()
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.space()
	}
}

func (s *jsonScan) array(depth int) bool {
	s.i++ // [
	s.space()
	if s.eat(']') {
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.space()
		if s.eat(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.space()
	}
}

// str checks a string (s.i at its opening quote) and reports whether it
// has escapes. Bytes that are not UTF-8 pass, as encoding/json lets them.
func (s *jsonScan) str() (escaped, ok bool) {
	if !s.eat('"') {
		return false, false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
			escaped = true
			if !s.escape() {
				return false, false
			}
		}
	}
	return false, false
}

// escape checks what follows a backslash.
func (s *jsonScan) escape() bool {
	if s.i >= len(s.b) {
		return false
	}
	c := s.b[s.i]
	s.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(s.b)-s.i < 4 {
			return false
		}
		for _, h := range s.b[s.i : s.i+4] {
			if !isHex(h) {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func (s *jsonScan) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

// digits skips a run of digits and says how long it was.
func (s *jsonScan) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
