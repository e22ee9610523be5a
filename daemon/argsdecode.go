package daemon

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeArgs reads a call's arguments into the value the validator checks:
// exactly what jsonschema.UnmarshalJSON makes of them (objects as
// map[string]any, arrays as []any, numbers as json.Number), without the
// json.Decoder, its buffer and its reflection, which were half of
// buildArgs' time and most of its allocations (BenchmarkBuildArgsObject).
// The arguments are valid JSON by now (buildArgs checked them or encoded
// them); anything else, and any string with an escape or that is not
// UTF-8, goes to encoding/json, so the value is the same either way
// (FuzzDecodeArgs).
func decodeArgs(args []byte) (any, error) {
	if !json.Valid(args) {
		return jsonschema.UnmarshalJSON(bytes.NewReader(args))
	}
	r := argReader{s: string(args)} // one copy; every key and string shares it
	return r.value(), nil
}

// argReader walks one valid JSON document.
type argReader struct {
	s string
	i int
}

func (r *argReader) value() any {
	r.space()
	switch r.s[r.i] {
	case '{':
		return r.object()
	case '[':
		return r.array()
	case '"':
		return r.str()
	case 't':
		r.i += len("true")
		return true
	case 'f':
		r.i += len("false")
		return false
	case 'n':
		r.i += len("null")
		return nil
	}
	start := r.i
	for r.i < len(r.s) && strings.IndexByte("+-.0123456789eE", r.s[r.i]) >= 0 {
		r.i++
	}
	return json.Number(r.s[start:r.i])
}

func (r *argReader) object() map[string]any {
	m := map[string]any{}
	r.i++ // {
	if r.space(); r.s[r.i] == '}' {
		r.i++
		return m
	}
	for {
		r.space()
		k := r.str()
		r.space()
		r.i++            // :
		m[k] = r.value() // a repeated key: the last wins, as in encoding/json
		r.space()
		c := r.s[r.i]
		r.i++ // , or }
		if c == '}' {
			return m
		}
	}
}

func (r *argReader) array() []any {
	a := []any{}
	r.i++ // [
	if r.space(); r.s[r.i] == ']' {
		r.i++
		return a
	}
	for {
		a = append(a, r.value())
		r.space()
		c := r.s[r.i]
		r.i++ // , or ]
		if c == ']' {
			return a
		}
	}
}

// str reads the string at r.i (its opening quote).
func (r *argReader) str() string {
	start := r.i
	plain := true
	r.i++
	for ; r.s[r.i] != '"'; r.i++ {
		if r.s[r.i] == '\\' {
			plain = false
			r.i++ // the escaped byte cannot end the string
		}
	}
	r.i++
	body := r.s[start+1 : r.i-1]
	if plain && utf8.ValidString(body) {
		return body
	}
	var out string
	_ = json.Unmarshal([]byte(r.s[start:r.i]), &out) // a valid string literal
	return out
}

func (r *argReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// encodeArgs is json.Marshal(obj), whose values are valid JSON (typed
// pairs, or members of a valid object), without its reflection: keys in
// order, each value as it is unless Marshal would change it (spaces to
// compact, or <, >, & or U+2028/9 to escape), which Marshal then encodes.
// FuzzEncodeArgs compares the two, errors included.
func encodeArgs(obj map[string]json.RawMessage) (json.RawMessage, error) {
	keys := make([]string, 0, 8) // (on the stack for a few)
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	n := 2
	for _, k := range keys {
		n += len(k) + len(obj[k]) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendKey(out, k)
		out = append(out, ':')
		v := obj[k]
		if len(v) == 0 || bytes.ContainsAny(v, " \t\r\n<>&\u2028\u2029") {
			var err error
			if v, err = json.Marshal(v); err != nil {
				return nil, err // as Marshal(obj) fails
			}
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// appendKey appends k as json.Marshal encodes a string: as it is between
// quotes when it is printable ASCII that needs no escape, else by Marshal.
func appendKey(out []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(out, jsonString(k)...)
		}
	}
	out = append(out, '"')
	out = append(out, k...)
	return append(out, '"')
}
