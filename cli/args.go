package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// errArgsNotObject is a JSON argument that is not an object.
var errArgsNotObject = errors.New("arguments must be a JSON object")

// pair is one key=value (or key:=JSON) argument.
type pair struct {
	key, value string
	raw        bool // key:=JSON
}

// parsedArgs is what the command line gave as tool arguments: either a whole
// JSON object or pairs that still need the tool's schema to be typed.
type parsedArgs struct {
	object json.RawMessage
	pairs  []pair
}

// needsSchema reports whether typing the arguments needs the input schema.
func (p parsedArgs) needsSchema() bool {
	for _, kv := range p.pairs {
		if !kv.raw {
			return true
		}
	}
	return false
}

// parseArgs reads the call's arguments: nothing, one JSON object (or "-"
// for one read from stdin), or key=value / key:=JSON pairs. Errors are usage
// errors.
func parseArgs(args []string, stdin io.Reader) (parsedArgs, error) {
	if len(args) == 0 {
		return parsedArgs{object: json.RawMessage("{}")}, nil
	}
	if len(args) == 1 && (args[0] == "-" || looksJSON(args[0])) {
		data := []byte(args[0])
		if args[0] == "-" {
			var err error
			if data, err = io.ReadAll(stdin); err != nil {
				return parsedArgs{}, fmt.Errorf("read arguments from stdin: %w", err)
			}
		}
		obj, err := jsonObject(data)
		if err != nil {
			return parsedArgs{}, usagef("%v", err)
		}
		return parsedArgs{object: obj}, nil
	}
	var p parsedArgs
	seen := map[string]bool{}
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			if looksJSON(arg) {
				return parsedArgs{}, usagef("give either one JSON object or key=value pairs, not both")
			}
			return parsedArgs{}, usagef("argument %q is not key=value (or key:=JSON, or one JSON object)", arg)
		}
		kv := pair{key: key, value: value}
		if strings.HasSuffix(key, ":") {
			kv.key, kv.raw = strings.TrimSuffix(key, ":"), true
			if !json.Valid([]byte(value)) {
				return parsedArgs{}, usagef("argument %s:=%s: the value is not valid JSON", kv.key, value)
			}
		}
		if kv.key == "" {
			return parsedArgs{}, usagef("argument %q has no name before =", arg)
		}
		if seen[kv.key] {
			return parsedArgs{}, usagef("argument %s is given twice", kv.key)
		}
		seen[kv.key] = true
		p.pairs = append(p.pairs, kv)
	}
	return p, nil
}

// looksJSON is an argument meant as a JSON document rather than key=value.
func looksJSON(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	switch s[0] {
	case '{', '[', '"':
		return true
	}
	return !strings.Contains(s, "=") && json.Valid([]byte(s))
}

// jsonObject checks that data is one JSON object.
func jsonObject(data []byte) (json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, errArgsNotObject
	}
	return json.RawMessage(data), nil
}

// build types the pairs by the tool's input schema (nil when not needed or
// unknown) and returns the arguments object.
func (p parsedArgs) build(inputSchema map[string]any) (json.RawMessage, error) {
	if p.object != nil {
		return p.object, nil
	}
	props, _ := inputSchema["properties"].(map[string]any)
	out := make(map[string]json.RawMessage, len(p.pairs))
	for _, kv := range p.pairs {
		if kv.raw {
			out[kv.key] = json.RawMessage(kv.value)
			continue
		}
		prop, _ := props[kv.key].(map[string]any)
		v, err := coerce(kv.value, schemaTypes(prop))
		if err != nil {
			return nil, usagef("argument %s: %v", kv.key, err)
		}
		out[kv.key] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// schemaTypes lists the JSON types a property schema admits: its type (one
// or a list), the types of anyOf/oneOf branches, and the kinds of enum/const
// values. Empty means unknown.
func schemaTypes(s map[string]any) map[string]bool {
	types := map[string]bool{}
	if s == nil {
		return types
	}
	switch t := s["type"].(type) {
	case string:
		types[t] = true
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok {
				types[str] = true
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := s[key].([]any)
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok {
				for t := range schemaTypes(m) {
					types[t] = true
				}
			}
		}
	}
	values, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		values = append(values, c)
	}
	for _, v := range values {
		types[kindOf(v)] = true
	}
	if len(types) == 0 {
		if s["properties"] != nil {
			types["object"] = true
		} else if s["items"] != nil {
			types["array"] = true
		}
	}
	return types
}

// kindOf names the JSON type of a decoded value.
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// coerce turns a command-line value into JSON of a type the schema admits:
// the value read as JSON when its kind is admitted (an integer also counts
// as a number), else the value as a string when strings are admitted (or
// nothing is known), else an error saying what was expected.
func coerce(value string, types map[string]bool) (json.RawMessage, error) {
	str := func() json.RawMessage { b, _ := json.Marshal(value); return b }
	if len(types) == 0 || (len(types) == 1 && types["string"]) {
		return str(), nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() && json.Valid([]byte(value)) {
		kind := ""
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			kind = kindOf(f)
		} else {
			kind = kindOf(v)
		}
		if types[kind] || (kind == "integer" && types["number"]) {
			return json.RawMessage(strings.TrimSpace(value)), nil
		}
	}
	if types["string"] {
		return str(), nil
	}
	return nil, fmt.Errorf("%q is not %s", value, expected(types))
}

// expected names the admitted types for an error message.
func expected(types map[string]bool) string {
	article := map[string]string{"integer": "an integer", "number": "a number", "boolean": "true or false",
		"array": "a JSON array", "object": "a JSON object", "null": "null"}
	var names []string
	for _, t := range []string{"integer", "number", "boolean", "array", "object", "null"} {
		if types[t] {
			names = append(names, article[t])
		}
	}
	if len(names) == 0 {
		return "of the expected type"
	}
	return strings.Join(names, " or ")
}
