package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpx-dev/mcpx/internal/jsonstr"
)

// AppendCallRequest appends r as JSON to b, as json.Marshal would encode it
// (the same document; a string with characters to escape is escaped by
// encoding/json itself), without encoding/json's reflection: the CLI
// encodes one request per process, where building the type's encoder
// costs more than the encoding (see scan.go for the answer's side).
// Arguments that are not valid JSON are an error, as with json.Marshal.
func AppendCallRequest(b []byte, r *CallRequest) ([]byte, error) {
	b = append(b, `{"namespace":`...)
	b = jsonstr.Append(b, r.Namespace)
	b = append(b, `,"tool":`...)
	b = jsonstr.Append(b, r.Tool)
	if len(r.Arguments) > 0 {
		buf := bytes.NewBuffer(append(b, `,"arguments":`...))
		if err := json.Compact(buf, r.Arguments); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		b = buf.Bytes()
	}
	if len(r.Pairs) > 0 {
		b = append(b, `,"pairs":[`...)
		for i, p := range r.Pairs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = jsonstr.Append(b, p.Key)
			b = append(b, `,"value":`...)
			b = jsonstr.Append(b, p.Value)
			b = appendTrue(b, "json", p.JSON)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	// The rest in the struct's order, as json.Marshal writes them.
	b = appendTrue(b, "noValidate", r.NoValidate)
	b = appendTrue(b, "raw", r.Raw)
	b = appendTrue(b, "stream", r.Stream)
	b = appendTrue(b, "noStatus", r.NoStatus)
	b = appendNonEmpty(b, "session", r.Session)
	b = appendNonEmpty(b, "cwd", r.Cwd)
	b = appendTrue(b, "confirmed", r.Confirmed)
	b = appendTrue(b, "task", r.Task)
	b = appendTrue(b, "detach", r.Detach)
	b = appendNonEmpty(b, "elicit", r.Elicit)
	b = appendTrue(b, "sample", r.Sample)
	b = appendTrue(b, "roots", r.Roots)
	b = appendTrue(b, "relay", r.Relay)
	return append(b, '}'), nil
}

// MarshalJSON is AppendCallRequest: a process that sends one request
// would spend more on encoding/json building the struct's encoder by
// reflection than on the encoding.
func (r CallRequest) MarshalJSON() ([]byte, error) { return AppendCallRequest(nil, &r) }

// appendTrue appends the member `,"name":true` when on (omitempty).
func appendTrue(b []byte, name string, on bool) []byte {
	if !on {
		return b
	}
	return append(append(append(b, `,"`...), name...), `":true`...)
}

// appendNonEmpty appends the member `,"name":"s"` unless s is empty
// (omitempty).
func appendNonEmpty(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return jsonstr.Append(b, s)
}
