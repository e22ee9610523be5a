package cli

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// An answer is read by the field's type, bounds, format and choices, or
// refused with the reason shown to the person.
func TestParseField(t *testing.T) {
	lo, hi, one, three := 1.0, 9.0, 1, 3
	fields := map[string]api.ElicitField{
		"int":   {Type: "integer", Minimum: &lo, Maximum: &hi},
		"num":   {Type: "number", Minimum: &lo},
		"bool":  {Type: "boolean"},
		"email": {Type: "string", Format: "email"},
		"date":  {Type: "string", Format: "date"},
		"short": {Type: "string", MinLen: &one, MaxLen: &three},
		"pick":  {Type: "string", Choices: []string{"s", "l"}, Titles: []string{"Small", "Large"}},
		"many":  {Type: "array", Choices: []string{"x", "y", "z"}, MinLen: &one},
	}
	for _, c := range []struct {
		field, in, want string // want: the JSON of the value, or "!" for a refusal
	}{
		{"int", "5", `5`}, {"int", "5.5", "!"}, {"int", "10", "!"}, {"int", "x", "!"},
		{"num", "2.25", `2.25`}, {"num", "0.5", "!"},
		{"bool", "Y", `true`}, {"bool", "no", `false`}, {"bool", "maybe", "!"},
		{"email", "a@b.example", `"a@b.example"`}, {"email", "Ada <a@b.example>", "!"}, {"email", "nope", "!"},
		{"date", "2026-07-28", `"2026-07-28"`}, {"date", "28/07/2026", "!"},
		{"short", "abc", `"abc"`}, {"short", "abcd", "!"},
		{"pick", "2", `"l"`}, {"pick", "small", `"s"`}, {"pick", "3", "!"},
		{"many", "3, 1,3", `["z","x"]`}, {"many", "4", "!"},
	} {
		v, err := parseField(fields[c.field], c.in)
		if c.want == "!" {
			if err == nil {
				t.Errorf("%s %q = %v, want a refusal", c.field, c.in, v)
			}
			continue
		}
		got, _ := json.Marshal(v)
		if err != nil || string(got) != c.want {
			t.Errorf("%s %q = %s (%v), want %s", c.field, c.in, got, err, c.want)
		}
	}
}

// A default shows the way it would be typed.
func TestDefaultText(t *testing.T) {
	for _, c := range []struct {
		f    api.ElicitField
		want string
	}{
		{api.ElicitField{Type: "boolean", Default: json.RawMessage(`true`)}, "Y/n"},
		{api.ElicitField{Type: "boolean"}, "y/n"},
		{api.ElicitField{Type: "string", Choices: []string{"a", "b"}, Default: json.RawMessage(`"b"`)}, "2"},
		{api.ElicitField{Type: "array", Choices: []string{"a", "b", "c"}, Default: json.RawMessage(`["c","a"]`)}, "3,1"},
		{api.ElicitField{Type: "string", Default: json.RawMessage(`"Ada"`)}, "Ada"},
		{api.ElicitField{Type: "string", Secret: true, Default: json.RawMessage(`"hunter2"`)}, "keep"},
		{api.ElicitField{Type: "integer", Default: json.RawMessage(`36`)}, "36"},
	} {
		if got := defaultText(c.f); got != c.want {
			t.Errorf("defaultText(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}
