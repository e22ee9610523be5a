package daemon

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

const argsTool = `{"name":"t","inputSchema":{"type":"object","properties":{
  "a":{"type":"number"},"n":{"type":"integer"},"s":{"type":"string"},"b":{"type":"boolean"},
  "list":{"type":"array","items":{"type":"string"}},"nums":{"type":"array","items":{"type":"integer"}},
  "obj":{"type":"object"},
  "maybe":{"type":["integer","null"]},"either":{"anyOf":[{"type":"integer"},{"type":"string"}]},
  "color":{"enum":["red","green"]},"level":{"enum":[1,2,3]},
  "point":{"$ref":"#/$defs/point"}},
  "$defs":{"point":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}}`

func argsSchema(t *testing.T, def string) *toolSchema {
	t.Helper()
	tool, ok := toolOf("ns", json.RawMessage(def))
	if !ok {
		t.Fatal("bad tool")
	}
	ts := compileTool(tool)
	if ts.err != nil {
		t.Fatal(ts.err)
	}
	return ts
}

func pairs(kv ...string) []api.ArgPair {
	var out []api.ArgPair
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		p := api.ArgPair{Key: k, Value: v}
		if strings.HasSuffix(k, ":") {
			p.Key, p.JSON = strings.TrimSuffix(k, ":"), true
		}
		out = append(out, p)
	}
	return out
}

func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPairsTypedBySchema(t *testing.T) {
	ts := argsSchema(t, argsTool)
	cases := []struct {
		object string
		pairs  []string
		want   string
	}{
		{"", nil, `{}`},
		{`{"a": 1}`, nil, `{"a": 1}`},
		{`{"a": 1}`, []string{"s=x"}, `{"a":1,"s":"x"}`},
		{"", []string{"a=1.5", "n=3"}, `{"a":1.5,"n":3}`},
		{"", []string{"s=123"}, `{"s":"123"}`}, // strings stay strings
		{"", []string{"s=a=b"}, `{"s":"a=b"}`},
		{"", []string{"b=true"}, `{"b":true}`},
		{"", []string{`list=["x","y"]`}, `{"list":["x","y"]}`},
		{"", []string{"list=x"}, `{"list":["x"]}`},               // one plain value: an array of one
		{"", []string{"list=x", "list=y"}, `{"list":["x","y"]}`}, // repeated key: an array
		{"", []string{"nums=1", "nums=2"}, `{"nums":[1,2]}`},     // items typed
		{"", []string{`obj={"k":1}`}, `{"obj":{"k":1}}`},
		{"", []string{"maybe=null"}, `{"maybe":null}`},
		{"", []string{"maybe=7"}, `{"maybe":7}`},
		{"", []string{"either=7"}, `{"either":7}`},
		{"", []string{"either=seven"}, `{"either":"seven"}`},
		{"", []string{"color=red"}, `{"color":"red"}`},
		{"", []string{"level=2"}, `{"level":2}`},
		{"", []string{"s:=\"5\""}, `{"s":"5"}`},              // := is raw JSON
		{"", []string{`point={"x":1}`}, `{"point":{"x":1}}`}, // $ref followed for typing
		{"", []string{"a=-3", "n=1e2"}, `{"a":-3,"n":1e2}`},
	}
	for _, c := range cases {
		got, err := buildArgs("ns", "t", ts, api.CallRequest{Arguments: json.RawMessage(c.object), Pairs: pairs(c.pairs...)})
		if err != nil {
			t.Errorf("%s %q: %v", c.object, c.pairs, err)
			continue
		}
		if canon(t, string(got)) != canon(t, c.want) {
			t.Errorf("%s %q = %s, want %s", c.object, c.pairs, got, c.want)
		}
	}
}

func TestArgumentsChecked(t *testing.T) {
	ts := argsSchema(t, argsTool)
	req := argsSchema(t, `{"name":"r","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"properties":{"path":{"type":"string"},"head":{"type":"number"}},"required":["path"],"additionalProperties":false}}`)
	cases := []struct {
		ts              *toolSchema
		object          string
		pairs           []string
		arg, want, sugg string
	}{
		{ts, "", []string{"a=abc"}, "a", `"abc" is not a number`, ""},
		{ts, "", []string{"n=1.5"}, "n", "not an integer", ""},
		{ts, "", []string{"b=maybe"}, "b", "not true or false", ""},
		{ts, "", []string{"s=1", "s=2"}, "s", "given 2 times", ""},
		{ts, "", []string{"nums=1", "nums=x"}, "nums", `"x" is not an integer`, ""},
		{ts, "", []string{"color=blue"}, "color", "do not match its input schema", ""},
		{ts, `{"point":{}}`, nil, "point", "missing property", ""}, // $ref/$defs validated
		{ts, `{"point":{"x":"1"}}`, nil, "point", "want integer", ""},
		{ts, `{"a":"1"}`, nil, "a", "want number", ""},
		{req, "", []string{"path=/x", "haed=1"}, "haed", `has no parameter "haed"`, "head"},
		{req, "", []string{"head=1"}, "path", `needs argument "path"`, ""},
	}
	for _, c := range cases {
		_, err := buildArgs("ns", "t", c.ts, api.CallRequest{Arguments: json.RawMessage(c.object), Pairs: pairs(c.pairs...)})
		var he *httpError
		if !errors.As(err, &he) || he.body.Code != api.CodeInvalidArguments {
			t.Errorf("%s %q: %v, want invalid_arguments", c.object, c.pairs, err)
			continue
		}
		if he.status != 422 || he.body.Argument != c.arg || !strings.Contains(he.body.Error, c.want) || he.body.Suggestion != c.sugg {
			t.Errorf("%s %q: %d %+v, want argument %q, message with %q, suggestion %q", c.object, c.pairs, he.status, he.body, c.arg, c.want, c.sugg)
		}
	}
	// --no-validate sends as given (pairs typed where possible).
	got, err := buildArgs("ns", "t", req, api.CallRequest{Pairs: pairs("haed=1", "head=x"), NoValidate: true})
	if err != nil || canon(t, string(got)) != `{"haed":"1","head":"x"}` {
		t.Fatalf("no-validate: %s %v", got, err)
	}
	// No schema known: plain strings, raw JSON kept.
	got, err = buildArgs("ns", "t", nil, api.CallRequest{Pairs: pairs("x=5", "y:=5")})
	if err != nil || canon(t, string(got)) != `{"x":"5","y":5}` {
		t.Fatalf("no schema: %s %v", got, err)
	}
}

func TestValidatorCompiledOncePerSnapshot(t *testing.T) {
	var x indexes
	const h = "0123456789abcdef"
	snap := testSnapshot(argsTool)
	tool, _ := toolOf("ns", snap.Tools[0])
	a := x.get(h, "d1", snap).derived.schemaOf(tool)
	b := x.get(h, "d1", snap).derived.schemaOf(tool)
	// Another decode of the same content (the same digest in the store)
	// shares the compiled schema.
	c := x.get(h, "d1", testSnapshot(argsTool)).derived.schemaOf(tool)
	if a != b || a != c {
		t.Fatal("the validator was compiled again for the same snapshot")
	}
	other := x.get(h, "d2", testSnapshot(strings.Replace(argsTool, `"a":{"type":"number"}`, `"a":{"type":"string"}`, 1))).derived.schemaOf(tool)
	if other == a {
		t.Fatal("a changed snapshot reused the old validator")
	}
}

func testSnapshot(tools ...string) *cache.Snapshot {
	snap := &cache.Snapshot{ServerHash: "0123456789abcdef"}
	for _, t := range tools {
		snap.Tools = append(snap.Tools, json.RawMessage(t))
	}
	return snap
}
