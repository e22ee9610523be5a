// Package jsonstr appends a Go string as a JSON string, the one small
// encoder that the daemon's wire types, its stdio transport and serve's
// results share when they write JSON by hand.
package jsonstr

import (
	"encoding/json"
	"unicode/utf8"
)

// Append appends s to b as a JSON string: as it is when it needs no
// escape (plain printable ASCII, every method name, id and tool name in
// practice), else exactly as encoding/json writes it.
func Append(b []byte, s string) []byte {
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
