package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// AppendCallRequest appends r as JSON to b, as json.Marshal would encode it
// (the same document; a string with characters to escape is escaped by
// encoding/json itself), without encoding/json's reflection: the CLI
// encodes one request per process, where building the type's encoder
// costs more than the encoding (see scan.go for the answer's side).
// Arguments that are not valid JSON are an error, as with json.Marshal.
func AppendCallRequest(b []byte, r *CallRequest) ([]byte, error) {
	b = append(b, `{"namespace":`...)
	b = appendJSONString(b, r.Namespace)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, r.Tool)
	if len(r.Arguments) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Arguments); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		b = append(b, `,"arguments":`...)
		b = append(b, buf.Bytes()...)
	}
	if len(r.Pairs) > 0 {
		b = append(b, `,"pairs":[`...)
		for i, p := range r.Pairs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendJSONString(b, p.Key)
			b = append(b, `,"value":`...)
			b = appendJSONString(b, p.Value)
			if p.JSON {
				b = append(b, `,"json":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	for _, f := range []struct {
		name string
		on   bool
	}{{"noValidate", r.NoValidate}, {"raw", r.Raw}, {"stream", r.Stream}} {
		if f.on {
			b = append(b, `,"`+f.name+`":true`...)
		}
	}
	if r.Session != "" {
		b = append(b, `,"session":`...)
		b = appendJSONString(b, r.Session)
	}
	if r.Cwd != "" {
		b = append(b, `,"cwd":`...)
		b = appendJSONString(b, r.Cwd)
	}
	for _, f := range []struct {
		name string
		on   bool
	}{{"confirmed", r.Confirmed}, {"task", r.Task}, {"detach", r.Detach}} {
		if f.on {
			b = append(b, `,"`+f.name+`":true`...)
		}
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string: as it is when it needs no
// escape, else as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
