package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestTypeScript(t *testing.T) {
	def := `{
	  "name": "create_issue",
	  "description": "Create an issue.",
	  "inputSchema": {
	    "type": "object",
	    "required": ["title", "labels"],
	    "properties": {
	      "title": {"type": "string", "description": "Issue title"},
	      "body": {"type": ["string", "null"]},
	      "labels": {"type": "array", "items": {"enum": ["bug", "feature"]}},
	      "priority": {"type": "integer", "default": 3},
	      "meta": {"type": "object", "additionalProperties": {"type": "number"}},
	      "target": {"oneOf": [{"$ref": "#/$defs/user"}, {"type": "boolean"}]},
	      "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
	      "weird-name": {},
	      "nested": {"type": "object", "properties": {"x": {"type": "number", "description": "ends */ here"}}, "required": ["x"]}
	    },
	    "$defs": {"user": {"type": "object", "properties": {"login": {"type": "string"}}}}
	  },
	  "outputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}
	}`
	got, err := typeScript("gh", []json.RawMessage{json.RawMessage(def)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"export interface CreateIssueInput {",
		"  /** Issue title */\n  title: string;",
		"  body?: string | null;",
		`  labels: ("bug" | "feature")[];`,
		"  /** @default 3 */\n  priority?: number;",
		"  meta?: Record<string, number>;",
		"  target?: User | boolean;",
		"  point?: [number, number];",
		`  "weird-name"?: unknown;`,
		"  nested?: {\n    /** ends *\\/ here */\n    x: number;\n  };",
		"export interface CreateIssueOutput {\n  id?: number;\n}",
		"export interface User {\n  login?: string;\n}",
		" * Create an issue.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestTypeScriptNonObjectAndEmpty(t *testing.T) {
	got, err := typeScript("", []json.RawMessage{
		json.RawMessage(`{"name":"time"}`),
		json.RawMessage(`{"name":"any-of","inputSchema":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"null"}]}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"export type TimeInput = Record<string, never>;",
		"export type AnyOfInput = {\n  a?: string;\n} | null;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestParen(t *testing.T) {
	for in, want := range map[string]string{
		"string":                "string",
		"string | null":         "(string | null)",
		"{\n  a: b | c;\n}":     "{\n  a: b | c;\n}",
		"{\n  a: b;\n} | null":  "({\n  a: b;\n} | null)",
		`"a|b"`:                 `"a|b"`,
		"Record<string, a | b>": "Record<string, a | b>",
	} {
		if got := paren(in); got != want {
			t.Errorf("paren(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPascal(t *testing.T) {
	for in, want := range map[string]string{"echo": "Echo", "delete_note": "DeleteNote", "get-file.v2": "GetFileV2", "2fa": "T2fa", "readFile": "ReadFile"} {
		if got := pascal(in); got != want {
			t.Errorf("pascal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTypeScriptEmptyObjectsAndUniqueNames(t *testing.T) {
	out, err := typeScript("ns", []json.RawMessage{
		json.RawMessage(`{"name":"time","inputSchema":{"type":"object","properties":{}}}`),
		json.RawMessage(`{"name":"read-file","inputSchema":{"type":"object","properties":{"p":{"$ref":"#/$defs/path"}},"$defs":{"path":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"read_file","inputSchema":{"type":"object","properties":{"p":{"$ref":"#/$defs/path"}},"$defs":{"path":{"type":"number"}}}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"export type TimeInput = Record<string, unknown>;",
		"export interface ReadFileInput {", "export interface ReadFileInput2 {",
		"export type Path = string;", "export type Path2 = number;", "p?: Path2;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// isIdent is the regexp ^[A-Za-z_$][A-Za-z0-9_$]*$ it replaced.
func TestIsIdentMatchesItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	for _, s := range []string{"", "a", "_", "$", "a1", "1a", "a-b", "a b", "aé", "é", "$x_9", "x\n"} {
		if got, want := isIdent(s), re.MatchString(s); got != want {
			t.Errorf("isIdent(%q) = %v; regexp: %v", s, got, want)
		}
	}
}
