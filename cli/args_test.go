package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const addSchema = `{"type":"object","properties":{
  "a":{"type":"number"},"n":{"type":"integer"},"s":{"type":"string"},"b":{"type":"boolean"},
  "list":{"type":"array","items":{"type":"string"}},"obj":{"type":"object"},
  "maybe":{"type":["integer","null"]},"either":{"anyOf":[{"type":"integer"},{"type":"string"}]},
  "color":{"enum":["red","green"]},"level":{"enum":[1,2,3]}}}`

func build(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal([]byte(addSchema), &schema); err != nil {
		t.Fatal(err)
	}
	p, err := parseArgs(args, strings.NewReader(`{"from":"stdin"}`))
	if err != nil {
		return "", err
	}
	out, err := p.build(schema)
	return string(out), err
}

func TestCoercionBySchema(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, `{}`},
		{[]string{`{"a": 1}`}, `{"a": 1}`},
		{[]string{"-"}, `{"from":"stdin"}`},
		{[]string{"a=1.5", "n=3"}, `{"a":1.5,"n":3}`},
		{[]string{"s=123"}, `{"s":"123"}`},                 // strings stay strings
		{[]string{"s=a=b"}, `{"s":"a=b"}`},                 // only the first = splits
		{[]string{"b=true"}, `{"b":true}`},                 //
		{[]string{`list=["x","y"]`}, `{"list":["x","y"]}`}, //
		{[]string{`obj={"k":1}`}, `{"obj":{"k":1}}`},
		{[]string{"maybe=null"}, `{"maybe":null}`},
		{[]string{"maybe=7"}, `{"maybe":7}`},
		{[]string{"either=7"}, `{"either":7}`},
		{[]string{"either=seven"}, `{"either":"seven"}`},
		{[]string{"color=red"}, `{"color":"red"}`},
		{[]string{"level=2"}, `{"level":2}`},
		{[]string{"unknown=5"}, `{"unknown":"5"}`},        // no type known: a string
		{[]string{"s:=5"}, `{"s":5}`},                     // := forces raw JSON
		{[]string{`raw:={"x":[1]}`}, `{"raw":{"x":[1]}}`}, //
		{[]string{"a=-3"}, `{"a":-3}`},                    //
		{[]string{"n=1e2"}, `{"n":1e2}`},                  // integral value in exponent form
	}
	for _, c := range cases {
		got, err := build(t, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var g, w any
		json.Unmarshal([]byte(got), &g)
		json.Unmarshal([]byte(c.want), &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%q = %s, want %s", c.args, got, c.want)
		}
	}
}

func TestCoercionErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"[1,2]"}, "arguments must be a JSON object"},
		{[]string{"42"}, "arguments must be a JSON object"},
		{[]string{`"text"`}, "arguments must be a JSON object"},
		{[]string{"{bad"}, "not valid JSON"},
		{[]string{"a=abc"}, `"abc" is not a number`},
		{[]string{"n=1.5"}, "not an integer"},
		{[]string{"b=maybe"}, "not true or false"},
		{[]string{"list=x,y"}, "not a JSON array"},
		{[]string{"nokey"}, "is not key=value"},
		{[]string{"=5"}, "no name"},
		{[]string{"a=1", "a=2"}, "given twice"},
		{[]string{"x:={"}, "not valid JSON"},
		{[]string{`{"a":1}`, "b=2"}, "not both"},
	}
	for _, c := range cases {
		_, err := build(t, c.args...)
		var ue *usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

func TestNeedsSchemaOnlyForPlainPairs(t *testing.T) {
	for args, want := range map[string]bool{`{"a":1}`: false, "a:=1": false, "a=1": true} {
		p, err := parseArgs([]string{args}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.needsSchema() != want {
			t.Errorf("%s: needsSchema = %v, want %v", args, !want, want)
		}
	}
}
