package upstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// agreeWithJSON fails t unless scanLine accepts line exactly when
// encoding/json decodes it into an object, and then finds the same id,
// method, result and error.
func agreeWithJSON(t *testing.T, line []byte) {
	t.Helper()
	m, ok := scanLine(line)
	var ref map[string]json.RawMessage
	err := json.Unmarshal(line, &ref)
	if want := err == nil && ref != nil; ok != want {
		t.Fatalf("scanLine(%q) ok = %v; encoding/json: %v (object %v)", line, ok, err, ref != nil)
	}
	if !ok {
		return
	}
	for _, f := range []struct {
		name string
		got  []byte
	}{{"id", m.id}, {"method", m.method}, {"result", m.result}, {"error", m.err}} {
		want, present := ref[f.name]
		if (f.got != nil) != present || !bytes.Equal(f.got, want) {
			t.Fatalf("scanLine(%q): %s = %q, encoding/json %q (present %v)", line, f.name, f.got, want, present)
		}
	}
}

func TestScanLine(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1048577,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpx-1","progress":0.5e-3}}`,
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"\u00e9\n"}}`,
		` {"id":1,"id":2,"result":null} ` + "\r",
		`{"\u0069d":3,"result":[true,false,null,-0,1.5E+7,"\/"]}`,
		`{"ID":3,"Result":1}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{`, `{"id":1,}`, `{"id":01}`, `{"id":1.}`, `{"id":-}`,
		`{"id":"` + "\x01" + `"}`, `{"id":"\x"}`, `{"id":"\u12"}`, `{"id":tru}`, `{"a":[1,]}`,
		`{"a":{"b":1,}}`, `{"a" 1}`, `{"a":1}x`, `{"a":1}{}`, "{\"a\":\"\xff\"}",
	} {
		agreeWithJSON(t, []byte(line))
	}
}

// The nesting bound is encoding/json's: depth 10000 passes, 10001 does not.
func TestScanLineNesting(t *testing.T) {
	for _, depth := range []int{maxNesting, maxNesting + 1} {
		inner := depth - 1 // the line's own object is one level
		line := `{"result":` + strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}`
		agreeWithJSON(t, []byte(line))
	}
}

// For any line, the scanner agrees with encoding/json on whether it is a
// JSON object and on the members that classify it, and never panics.
func FuzzScanLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":[1,2,{"b":"c"}]}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"\ud83d\ude00"}}`,
		`{"id":1,"method":"ping"}`, `{"\u0072esult":1e9}`, `[1]`, `{"a":-0.0e-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		agreeWithJSON(t, line)
	})
}
