package schemadoc

import (
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

func TestResolve(t *testing.T) {
	root := testkit.Object(t, `{"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string"}, "a/b c": {"type": "integer"}},
		"definitions": {"D": {"type": "boolean"}}}`)
	for ref, want := range map[string]any{
		"#/$defs/A":         "string",
		"#/definitions/D":   "boolean",
		"#/$defs/a~1b%20c":  "integer",
		"#/$defs/missing":   nil,
		"https://x.invalid": nil,
	} {
		got := Resolve(root, map[string]any{"$ref": ref})["type"]
		if got != want {
			t.Errorf("Resolve(%s) type = %v, want %v", ref, got, want)
		}
	}
	// A cycle ends after a few levels, on a schema still holding a $ref.
	loop := testkit.Object(t, `{"$defs": {"L": {"$ref": "#/$defs/L"}}}`)
	if got := Resolve(loop, map[string]any{"$ref": "#/$defs/L"}); got["$ref"] == nil {
		t.Errorf("cycle resolved to %v", got)
	}
}

func TestTypes(t *testing.T) {
	for in, want := range map[string][]string{
		`{"type": "string"}`:                      {"string"},
		`{"type": ["string", "null", 3]}`:         {"string", "null"},
		`{"properties": {}}`:                      {"object"},
		`{"additionalProperties": false}`:         {"object"},
		`{"items": {}}`:                           {"array"},
		`{"prefixItems": []}`:                     {"array"},
		`{"description": "nothing about a type"}`: nil,
	} {
		if got := Types(testkit.Object(t, in)); !reflect.DeepEqual(got, want) {
			t.Errorf("Types(%s) = %q, want %q", in, got, want)
		}
	}
	if got := Declared(testkit.Object(t, `{"items": {}}`)); got != nil {
		t.Errorf("Declared infers: %q", got)
	}
}
