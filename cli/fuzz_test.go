package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// key=value, key:=JSON and whole-object arguments, typed against a schema.
// Whatever the input, the result is an error or a JSON object.
func FuzzArgs(f *testing.F) {
	f.Add("text=hi\x00n:=3\x00flag=true", `{"properties":{"n":{"type":"integer"},"flag":{"type":"boolean"}}}`)
	f.Add(`{"a": [1, 2]}`, `{}`)
	f.Add("a:=not json\x00=x\x00b=", `{"properties":{"a":{"type":["number","null"]}}}`)
	f.Fuzz(func(t *testing.T, argv, schema string) {
		args := strings.Split(argv, "\x00")
		p, err := parseArgs(args, strings.NewReader(argv))
		if err != nil {
			return
		}
		var s map[string]any
		_ = json.Unmarshal([]byte(schema), &s)
		out, err := p.build(s)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("arguments %q built %s, not a JSON object: %v", args, out, err)
		}
	})
}
