package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// errArgsNotObject is a JSON argument that is not an object.
var errArgsNotObject = errors.New("arguments must be a JSON object")

// callArgs is what the command line gave as tool arguments, raw: a whole
// JSON object and/or pairs. The daemon types the pairs against the tool's
// input schema and checks the result (DESIGN: arguments travel raw).
type callArgs struct {
	object json.RawMessage // nil when none was given
	pairs  []api.ArgPair
}

// parseArgs reads the call's arguments. The first may be a whole object:
// JSON, "-" (read from stdin) or "@FILE"; the rest (or all) are key=value,
// key:=JSON, key=@FILE (the file's contents as the value) or key:=@FILE
// (the file's JSON). A value that starts with @ literally is written \@.
// A repeated key is passed on: the daemon builds an array where the schema
// says array. Errors are usage errors.
func parseArgs(args []string, stdin io.Reader) (callArgs, error) {
	var p callArgs
	if len(args) > 0 && (args[0] == "-" || strings.HasPrefix(args[0], "@") || looksJSON(args[0])) {
		var data []byte
		switch first := args[0]; {
		case first == "-":
			var err error
			if data, err = io.ReadAll(stdin); err != nil {
				return callArgs{}, fmt.Errorf("read arguments from stdin: %w", err)
			}
		case strings.HasPrefix(first, "@"):
			var err error
			if data, err = os.ReadFile(first[1:]); err != nil {
				return callArgs{}, usagef("arguments %s: %v", first, err)
			}
		default:
			data = []byte(first)
		}
		obj, err := jsonObject(data)
		if err != nil {
			return callArgs{}, usagef("%s: %v", argSource(args[0]), err)
		}
		p.object = obj
		args = args[1:]
	}
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			if looksJSON(arg) || arg == "-" || strings.HasPrefix(arg, "@") {
				return callArgs{}, usagef("give one JSON object (or - or @FILE) first, then key=value pairs")
			}
			return callArgs{}, usagef("argument %q is not key=value (or key:=JSON, key=@FILE, or one JSON object)", arg)
		}
		kv := api.ArgPair{Key: key, Value: value}
		if strings.HasSuffix(key, ":") {
			kv.Key, kv.JSON = strings.TrimSuffix(key, ":"), true
		}
		if kv.Key == "" {
			return callArgs{}, usagef("argument %q has no name before =", arg)
		}
		switch {
		case strings.HasPrefix(value, `\@`):
			kv.Value = value[1:]
		case strings.HasPrefix(value, "@") && len(value) > 1:
			data, err := os.ReadFile(value[1:])
			if err != nil {
				return callArgs{}, usagef("argument %s: %v", kv.Key, err)
			}
			kv.Value = string(data)
		}
		if kv.JSON && !json.Valid([]byte(kv.Value)) {
			return callArgs{}, usagef("argument %s:=%s: the value is not valid JSON", kv.Key, value)
		}
		p.pairs = append(p.pairs, kv)
	}
	return p, nil
}

// argSource names where an arguments object came from, for errors.
func argSource(first string) string {
	switch {
	case first == "-":
		return "arguments from stdin"
	case strings.HasPrefix(first, "@"):
		return "arguments " + first
	}
	return "arguments"
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
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, errArgsNotObject
	}
	return json.RawMessage(data), nil
}
