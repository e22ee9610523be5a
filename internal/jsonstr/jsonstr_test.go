package jsonstr

import (
	"encoding/json"
	"testing"
)

// Append writes what encoding/json writes, for every string.
func FuzzAppendMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "tools/call", `a"b`, `a\b`, "<&>", "tab\t", "é", "\x7f", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, want x%s", s, got, want)
		}
	})
}
