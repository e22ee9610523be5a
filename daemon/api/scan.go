package api

import (
	"encoding/json"
	"errors"
	"strings"
	"unsafe"
)

// A call's answer is read by a small reader of known shapes instead of
// encoding/json's reflection, which costs a process that lives for one
// call more than the decoding itself: 7 % of a warm `mcpx call`, measured
// with interleaved runs. The input is checked with json.Valid first, and
// whatever the reader does not expect (a key that differs from a field's
// name only in case, a value of another type, null) is left to
// encoding/json, so the result is the same either way (fuzz_test.go).

// errOtherShape sends a document to encoding/json.
var errOtherShape = errors.New("not the expected shape")

// CallResult is what the CLI reads of a CallToolResult to show it.
type CallResult struct {
	Content           []ContentItem   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// ContentItem is one content block of a result (or the resource inside an
// embedded resource block), with the fields the CLI shows.
type ContentItem struct {
	Type     string       `json:"type"`
	Text     string       `json:"text"`
	URI      string       `json:"uri"`
	Name     string       `json:"name"`
	Resource *ContentItem `json:"resource"`
}

// DecodeCallResponse decodes the answer of POST /v1/call, as
// json.Unmarshal would. The result shares data's memory (no copy of a
// result that may run to megabytes): the caller must not change data
// afterwards.
func DecodeCallResponse(data []byte) (*CallResponse, error) {
	r, _, err := decodeKnown(data, readCallResponse)
	return r, err
}

// DecodeCallResult decodes the parts of a CallToolResult the CLI shows, as
// json.Unmarshal would. Like DecodeCallResponse, the result shares data's
// memory.
func DecodeCallResult(data []byte) (*CallResult, error) {
	r, _, err := decodeKnown(data, readCallResult)
	return r, err
}

// decodeKnown decodes data into a new T with read, the reader of its known
// shapes, and with encoding/json when data is not valid JSON or read finds
// another shape. known reports that read did it.
func decodeKnown[T any](data []byte, read func(s string, into *T) error) (r *T, known bool, err error) {
	if json.Valid(data) {
		r = new(T)
		err := read(unsafe.String(unsafe.SliceData(data), len(data)), r)
		if err == nil {
			return r, true, nil
		}
		if !errors.Is(err, errOtherShape) {
			return nil, false, err
		}
	}
	r = new(T)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, false, err
	}
	return r, false, nil
}

func readCallResponse(s string, r *CallResponse) error {
	return members(s, func(key, v string) error {
		switch key {
		case "result":
			r.Result = rawOf(v)
		case "isError":
			return readBool(v, &r.IsError)
		case "blobs":
			return json.Unmarshal([]byte(v), &r.Blobs)
		case "task":
			return json.Unmarshal([]byte(v), &r.Task)
		default:
			return unknownKey(key, "result", "isError", "blobs", "task")
		}
		return nil
	})
}

func readCallResult(s string, r *CallResult) error {
	return members(s, func(key, v string) error {
		switch key {
		case "content":
			r.Content = r.Content[:0]
			if r.Content == nil {
				r.Content = []ContentItem{} // [] is empty, not absent
			}
			return elements(v, func(item string) error {
				var c ContentItem
				if err := readContentItem(item, &c); err != nil {
					return err
				}
				r.Content = append(r.Content, c)
				return nil
			})
		case "structuredContent":
			r.StructuredContent = rawOf(v)
		default:
			return unknownKey(key, "content", "structuredContent")
		}
		return nil
	})
}

func readContentItem(s string, c *ContentItem) error {
	return members(s, func(key, v string) error {
		switch key {
		case "type":
			return readString(v, &c.Type)
		case "text":
			return readString(v, &c.Text)
		case "uri":
			return readString(v, &c.URI)
		case "name":
			return readString(v, &c.Name)
		case "resource":
			// encoding/json decodes a repeated key into the value it
			// already holds; a fresh one is the same unless repeated.
			if c.Resource != nil {
				return errOtherShape
			}
			c.Resource = &ContentItem{}
			return readContentItem(v, c.Resource)
		default:
			return unknownKey(key, "type", "text", "uri", "name", "resource")
		}
	})
}

// rawOf is v, a slice of the data being decoded, as bytes again.
func rawOf(v string) json.RawMessage { return unsafe.Slice(unsafe.StringData(v), len(v)) }

// unknownKey is nil for a key encoding/json would ignore, and errOtherShape
// for one it would match to a field case-insensitively.
func unknownKey(key string, fields ...string) error {
	for _, f := range fields {
		if strings.EqualFold(key, f) {
			return errOtherShape
		}
	}
	return nil
}

func readBool(v string, b *bool) error {
	switch v {
	case "true":
		*b = true
	case "false":
		*b = false
	default:
		return errOtherShape
	}
	return nil
}

func readString(v string, s *string) error {
	if v == "" || v[0] != '"' {
		return errOtherShape
	}
	str, _, err := jsonString(v)
	if err != nil {
		return err
	}
	*s = str
	return nil
}

// members calls visit with each member of the JSON object s: its key and
// the text of its value. s must be valid JSON (json.Valid); anything but
// an object is errOtherShape.
func members(s string, visit func(key, value string) error) error {
	return entries(s, '{', '}', visit)
}

// elements calls visit with the text of each element of the JSON array s
// (valid JSON); anything but an array is errOtherShape.
func elements(s string, visit func(value string) error) error {
	return entries(s, '[', ']', func(_, v string) error { return visit(v) })
}

// entries walks the object or array s (open and end are its brackets),
// calling visit with each entry: a member's key ("" in an array) and the
// text of its value.
func entries(s string, open, end byte, visit func(key, value string) error) error {
	s = skipSpace(s)
	if s == "" || s[0] != open {
		return errOtherShape
	}
	s = skipSpace(s[1:])
	if s[0] == end {
		return nil
	}
	for {
		key := ""
		if open == '{' {
			k, rest, err := jsonString(s)
			if err != nil {
				return err
			}
			key, s = k, skipSpace(skipSpace(rest)[1:]) // past the colon
		}
		n := valueLen(s)
		if err := visit(key, s[:n]); err != nil {
			return err
		}
		rest := skipSpace(s[n:])
		if rest[0] == end {
			return nil
		}
		s = skipSpace(rest[1:]) // past the comma
	}
}

// valueLen is the length of the JSON value at the start of s (valid JSON).
func valueLen(s string) int {
	switch s[0] {
	case '"':
		return stringLen(s)
	case '{', '[':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"':
				i += stringLen(s[i:]) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	default: // a number, true, false or null
		i := 0
		for i < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[i])) {
			i++
		}
		return i
	}
}

// stringLen is the length of the JSON string at the start of s, quotes
// included.
func stringLen(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

func skipSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') {
		s = s[1:]
	}
	return s
}
