package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcpx-dev/mcpx/internal/jsonstr"
)

// The brief namespace listing (GET /v1/namespaces?brief=1, what `mcpx ls`
// shows) is application/x-ndjson, like the brief tool list (rows.go): a
// first line {"unavailableSources":[…]} ({} when every source was read),
// then one line per namespace, a NamespaceRow object whose values are
// strings, numbers and true. The daemon writes it without reflection and
// the CLI reads each line in one pass: with 500 servers configured, the
// listing as one JSON document cost the daemon a fifth of its CPU to
// encode and the CLI half of its instructions to check and read.

var namespaceRowFields = []string{"name", "description", "source", "tools", "live", "replaced", "exitsAfterAnswer", "state", "error"}

// AppendNamespaceRows appends the brief listing of rows and unavailable
// to b.
func AppendNamespaceRows(b []byte, rows iter.Seq[*NamespaceRow], unavailable []UnavailableSource) []byte {
	if len(unavailable) == 0 {
		b = append(b, "{}\n"...)
	} else {
		// Rare (a source that does not parse), and small.
		u, _ := json.Marshal(unavailable) // strings only: always encodes
		b = append(b, `{"unavailableSources":`...)
		b = append(append(b, u...), "}\n"...)
	}
	for r := range rows {
		b = append(appendNamespaceRow(b, r), '\n')
	}
	return b
}

// appendNamespaceRow appends n as json.Marshal encodes a NamespaceRow (the
// same keys, in the same order, the same ones left out).
func appendNamespaceRow(b []byte, n *NamespaceRow) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, n.Name)
	if n.Description != "" {
		b = jsonstr.Append(append(b, `,"description":`...), n.Description)
	}
	if n.Source != "" {
		b = jsonstr.Append(append(b, `,"source":`...), n.Source)
	}
	for _, c := range [...]struct {
		key string
		n   int
	}{{`,"tools":`, n.Tools}, {`,"live":`, n.Live}, {`,"replaced":`, n.Replaced}} {
		if c.n != 0 {
			b = strconv.AppendInt(append(b, c.key...), int64(c.n), 10)
		}
	}
	if n.ExitsAfterAnswer {
		b = append(b, `,"exitsAfterAnswer":true`...)
	}
	b = jsonstr.Append(append(b, `,"state":`...), n.State)
	if n.Error != "" {
		b = jsonstr.Append(append(b, `,"error":`...), n.Error)
	}
	return append(b, '}')
}

// DecodeNamespaceRows reads a brief namespace listing as the listing it
// abbreviates (what a NamespaceRow leaves out is left zero). Strings share
// data's memory: the caller must not change data afterwards.
func DecodeNamespaceRows(data []byte) (*NamespacesResponse, error) {
	head, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, errors.New("namespace rows: first line not terminated")
	}
	r := &NamespacesResponse{Namespaces: make([]Namespace, 0, bytes.Count(rest, []byte("\n")))}
	if string(head) != "{}" {
		var h struct {
			Unavailable []UnavailableSource `json:"unavailableSources"`
		}
		if err := json.Unmarshal(head, &h); err != nil {
			return nil, fmt.Errorf("namespace rows: first line: %w", err)
		}
		r.Unavailable = h.Unavailable
	}
	s := unsafe.String(unsafe.SliceData(rest), len(rest))
	for line := 2; s != ""; line++ {
		var row string
		row, s, ok = cut(s, '\n')
		if !ok {
			return nil, fmt.Errorf("namespace rows: line %d: not terminated", line)
		}
		r.Namespaces = append(r.Namespaces, Namespace{})
		if err := decodeNamespaceRow(row, &r.Namespaces[len(r.Namespaces)-1]); err != nil {
			return nil, fmt.Errorf("namespace rows: line %d: %w", line, err)
		}
	}
	return r, nil
}

// decodeNamespaceRow reads one row: an object of string, integer and
// boolean members without whitespace (what appendNamespaceRow writes). A
// key it does not know is skipped, whatever its value, so that a daemon
// that adds one does not break an older CLI.
func decodeNamespaceRow(s string, n *Namespace) error {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return errors.New("want an object")
	}
	s = s[1 : len(s)-1]
	for s != "" {
		key, rest, err := jsonString(s)
		if err != nil {
			return err
		}
		if rest == "" || rest[0] != ':' {
			return errors.New("want a colon after a key")
		}
		if rest, err = readRowMember(key, rest[1:], n); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		switch {
		case rest == "":
			return nil
		case rest[0] != ',' || len(rest) == 1:
			return errors.New("want a comma between members")
		}
		s = rest[1:]
	}
	return nil
}

// readRowMember reads the value of key at the start of s into n and
// returns what follows it.
func readRowMember(key, s string, n *Namespace) (rest string, err error) {
	var str *string
	var num *int
	switch key {
	case "name":
		str = &n.Name
	case "description":
		str = &n.Description
	case "source":
		str = &n.Source
	case "state":
		str = &n.State
	case "error":
		str = &n.Error
	case "tools":
		num = &n.Tools
	case "live":
		num = &n.Live
	case "replaced":
		num = &n.Replaced
	case "exitsAfterAnswer":
		lit, rest := scalar(s)
		if lit != "true" && lit != "false" {
			return "", errors.New("want true or false")
		}
		n.ExitsAfterAnswer = lit == "true"
		return rest, nil
	default:
		if unknownKey(key, namespaceRowFields...) != nil {
			// encoding/json would take it for the field it spells
			// in other case; a daemon never writes it so.
			return "", errors.New("a key in other case than its field's")
		}
	}
	switch {
	case str != nil:
		*str, rest, err = jsonString(s)
		return rest, err
	case num != nil:
		lit, rest := scalar(s)
		if !jsonInteger(lit) {
			return "", errors.New("want an integer")
		}
		if *num, err = strconv.Atoi(lit); err != nil {
			return "", err // out of range
		}
		return rest, nil
	case s != "" && s[0] == '"': // a string of a key not known here
		_, rest, err = jsonString(s)
		return rest, err
	case s != "" && (s[0] == '{' || s[0] == '['): // an object or array of a key not known here
		n := valueLen(s)
		if !json.Valid([]byte(s[:n])) {
			return "", errors.New("want a JSON value")
		}
		return s[n:], nil
	default: // a number or literal of a key not known here
		lit, rest := scalar(s)
		if lit != "true" && lit != "false" && lit != "null" && !json.Valid([]byte(lit)) {
			return "", errors.New("want a string, number, true, false or null")
		}
		return rest, nil
	}
}

// scalar splits s before the comma that ends its first value (a number or
// a literal).
func scalar(s string) (value, rest string) {
	if i := strings.IndexByte(s, ','); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// jsonInteger reports whether s is an integer as JSON writes one: an
// optional minus, then 0 or digits not starting with 0 (strconv.Atoi
// would also take "+1" and "01").
func jsonInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
