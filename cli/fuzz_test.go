package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// key=value, key:=JSON and whole-object arguments as the CLI reads them
// (typing against the schema is the daemon's: daemon.FuzzArgs). Whatever
// the input, the result is an error, or an object that is a JSON object and
// pairs that each have a name.
func FuzzParseArgs(f *testing.F) {
	f.Add("text=hi\x00n:=3\x00flag=true")
	f.Add(`{"a": [1, 2]}`)
	f.Add("a:=not json\x00=x\x00b=")
	f.Add("-")
	f.Fuzz(func(t *testing.T, argv string) {
		args := strings.Split(argv, "\x00")
		p, err := parseArgs(args, strings.NewReader(argv))
		if err != nil {
			return
		}
		if p.object != nil {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(p.object, &obj); err != nil {
				t.Fatalf("arguments %q gave %s, not a JSON object: %v", args, p.object, err)
			}
		}
		for _, kv := range p.pairs {
			if kv.Key == "" {
				t.Fatalf("arguments %q gave a pair without a name: %+v", args, kv)
			}
		}
	})
}
