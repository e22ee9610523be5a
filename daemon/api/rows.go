package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The brief tool list (GET /v1/tools?ns=NS&brief=1, what `mcpx ls NS`
// shows) is application/x-ndjson: a first line {"namespace": Namespace},
// then one line per tool, ["name","description"], in the server's order.
// A listing of 10,000 tools is then read without reflection: each row is
// two JSON strings, and a string without escapes is used as it stands.

// AppendToolRow appends the row of one tool (with its newline) to b.
func AppendToolRow(b []byte, name, description string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode([2]string{name, description}) // strings always encode
	return append(b, buf.Bytes()...)
}

// DecodeToolRows reads a brief tool list. Its tools carry Namespace, Name
// and Description only.
func DecodeToolRows(data []byte) (*ToolsResponse, error) {
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	var h struct {
		Namespace *Namespace `json:"namespace"`
	}
	if err := json.Unmarshal(head, &h); err != nil {
		return nil, fmt.Errorf("tool rows: first line: %w", err)
	}
	if h.Namespace == nil {
		return nil, errors.New("tool rows: first line has no namespace")
	}
	r := &ToolsResponse{Namespace: *h.Namespace, Tools: make([]Tool, 0, bytes.Count(rest, []byte("\n")))}
	// One conversion; the rows' strings are slices of it.
	s := string(rest)
	for line := 1; s != ""; line++ {
		var row string
		var ok bool
		row, s, ok = cut(s, '\n')
		if !ok {
			return nil, fmt.Errorf("tool rows: line %d: not terminated", line+1)
		}
		name, desc, err := decodeRow(row)
		if err != nil {
			return nil, fmt.Errorf("tool rows: line %d: %w", line+1, err)
		}
		r.Tools = append(r.Tools, Tool{Namespace: r.Namespace.Name, Name: name, Description: desc})
	}
	return r, nil
}

func cut(s string, sep byte) (before, after string, found bool) {
	if i := strings.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// decodeRow reads ["name","description"] (no other whitespace: what
// AppendToolRow writes).
func decodeRow(row string) (name, desc string, err error) {
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
	desc, rest, err = jsonString(rest[1:])
	if err != nil {
		return "", "", err
	}
	if rest != "" {
		return "", "", errors.New("want two strings")
	}
	return name, desc, nil
}

// jsonString reads the JSON string at the start of s and returns its value
// and what follows. A string of plain characters (no escape, no control
// character, valid UTF-8) is the slice between its quotes; anything else is
// read by encoding/json.
func jsonString(s string) (string, string, error) {
	if s == "" || s[0] != '"' {
		return "", "", errors.New("want a string")
	}
	plain, ascii := true, true
	for i := 1; i < len(s); i++ {
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
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", "", errors.New("unterminated string")
}
