package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestJSONCAccepts(t *testing.T) {
	tests := []struct {
		name, src string
		wantArgs  []string
	}{
		{"line comments", "// head\n{\"mcpServers\": {\"a\": {\"command\": \"x\", // why\n\"args\": [\"1\"]}}}\n// tail", []string{"1"}},
		{"block comments", "{/* a\nmultiline */\"mcpServers\": {\"a\": {\"command\": /* c */ \"x\", \"args\": [\"1\"/**/]}}}", []string{"1"}},
		{"trailing commas", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"1\", \"2\",],},},}", []string{"1", "2"}},
		{"comment markers inside strings", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"// no\", \"/* no */\", \"a,]\", \"q\\\"//\"]}}}", []string{"// no", "/* no */", "a,]", "q\"//"}},
		{"byte order mark", "\ufeff{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"1\"]}}}", []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadString(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Servers["a"].Args
			if strings.Join(got, "|") != strings.Join(tt.wantArgs, "|") {
				t.Errorf("args = %q, want %q", got, tt.wantArgs)
			}
		})
	}
}

func TestJSONCErrorsArePositioned(t *testing.T) {
	tests := []struct {
		name, src   string
		line, col   int
		kind        error
		msgContains string
	}{
		{"missing colon", "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}", 3, 21, ErrSyntax, "after object key"},
		{"double comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",, }\n  }\n}", 3, 26, ErrSyntax, "','"},
		{"byte-order mark is not a column", "\ufeff{\"mcpServers\" 1}", 1, 15, ErrSyntax, "after object key"},
		{"column counts characters", "{\"mcpServers\": {\"é\": {\"command\" 1}}}", 1, 33, ErrSyntax, ""},
		{"unexpected end", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n", 3, 25, ErrSyntax, "end of JSON"},
		{"unterminated comment", "{\n  /* open\n}", 2, 3, ErrSyntax, "unterminated"},
		{"top level array", "\n  [1]", 2, 3, ErrType, "object"},
		{"server map not an object", "{\"mcpServers\": []}", 1, 16, ErrType, "mcpServers"},
		{"max not a number", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"mcpx\": {\"max\": \"2\"}}}}", 1, 55, ErrType, "mcpx.max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.src)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.Line != tt.line || pe.Col != tt.col {
				t.Errorf("position = %d:%d, want %d:%d (%v)", pe.Line, pe.Col, tt.line, tt.col, err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("err = %v, want kind %v", err, tt.kind)
			}
			if !strings.Contains(pe.Msg, tt.msgContains) {
				t.Errorf("message %q does not contain %q", pe.Msg, tt.msgContains)
			}
			if !strings.HasPrefix(err.Error(), pe.File+":") || !strings.HasSuffix(pe.File, ".mcpx.json") {
				t.Errorf("Error() = %q, want FILE:LINE:COL: prefix", err)
			}
		})
	}
}

// A value of the wrong type in a server entry is that entry's problem,
// positioned like a parse error; the file still loads.
func TestEntryProblemsArePositioned(t *testing.T) {
	tests := []struct {
		name, src string
		line, col int
		contains  string
	}{
		{"args not an array", "{\n\"mcpServers\": {\n \"a\": {\"command\": \"x\",\n   \"args\": 5}}}", 4, 12, `args: want an array of strings, not 5`},
		{"args element", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"1\", true]}}}", 1, 53, "args[1]"},
		{"env value", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K\": 1}}}}", 1, 52, "env.K"},
		{"entry not an object", "{\"servers\": {\"a\": \"x\"}}", 1, 19, `the entry must be an object, not "x"`},
		{"column counts characters", "{\"mcpServers\": {\"a\": {\"command\": \"é\", \"cwd\": 1}}}", 1, 46, "cwd: want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadString(t, tt.src)
			if err != nil {
				t.Fatalf("an entry problem failed the file: %v", err)
			}
			s := c.Servers["a"]
			if s == nil {
				t.Fatalf("server missing: %v", c.Names())
			}
			want := fmt.Sprintf("%s:%d:%d: ", c.Sources[0], tt.line, tt.col)
			if !strings.HasPrefix(s.Problem, want) || !strings.Contains(s.Problem, tt.contains) {
				t.Errorf("problem = %q, want prefix %q containing %q", s.Problem, want, tt.contains)
			}
		})
	}
}
