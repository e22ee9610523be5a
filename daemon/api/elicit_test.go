package api

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// A form's fields come in the schema's order, with what each field's
// schema says; the defaults fill a form only when every required field
// has one.
func TestElicitFields(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"z": {"type":"string","title":"Zed","default":"x","minLength":1,"maxLength":3,"format":"email"},
		"a": {"type":"integer","minimum":1,"maximum":9},
		"pick": {"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"},
		"old": {"type":"string","enum":["r","g"],"enumNames":["Red","Green"]},
		"many": {"type":"array","items":{"anyOf":[{"const":"x","title":"X"},{"const":"y","title":"Y"}]},"minItems":1,"default":["y"]},
		"ok": {"type":"boolean","default":true},
		"pin": {"type":"string","writeOnly":true}
	},"required":["a","z"]}`)
	fields, err := ElicitFields(schema)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if want := []string{"z", "a", "pick", "old", "many", "ok", "pin"}; !slices.Equal(names, want) {
		t.Fatalf("order %q, want %q", names, want)
	}
	z, a, pick, old, many, pin := fields[0], fields[1], fields[2], fields[3], fields[4], fields[6]
	if z.Title != "Zed" || !z.Required || z.Format != "email" || *z.MinLen != 1 || *z.MaxLen != 3 || string(z.Default) != `"x"` {
		t.Errorf("z = %+v", z)
	}
	if !a.Required || a.Type != "integer" || *a.Minimum != 1 || *a.Maximum != 9 || a.Default != nil {
		t.Errorf("a = %+v", a)
	}
	if !slices.Equal(pick.Choices, []string{"s", "l"}) || !slices.Equal(pick.Titles, []string{"Small", "Large"}) {
		t.Errorf("pick = %+v", pick)
	}
	if !slices.Equal(old.Choices, []string{"r", "g"}) || !slices.Equal(old.Titles, []string{"Red", "Green"}) {
		t.Errorf("old = %+v", old)
	}
	if many.Type != "array" || !slices.Equal(many.Choices, []string{"x", "y"}) || *many.MinLen != 1 {
		t.Errorf("many = %+v", many)
	}
	if !pin.Secret {
		t.Errorf("pin is not secret")
	}

	if _, ok := ElicitDefaultContent(fields); ok {
		t.Errorf("defaults filled a form whose required a has none")
	}
	content, ok := ElicitDefaultContent(fields[2:])
	got, _ := json.Marshal(content)
	if !ok || string(got) != `{"many":["y"],"ok":true,"pick":"l"}` {
		t.Errorf("defaults = %s, %v", got, ok)
	}

	for _, bad := range []string{`[]`, `{"type":"array"}`, `{"properties":{"n":{"type":"object"}}}`, `{"properties":{"n":{"type":"array"}}}`} {
		if _, err := ElicitFields(json.RawMessage(bad)); !errors.Is(err, ErrBadSchema) {
			t.Errorf("ElicitFields(%s) = %v, want ErrBadSchema", bad, err)
		}
	}
}

// An answer is checked for the shape of the question's result.
func TestCheckResults(t *testing.T) {
	for raw, ok := range map[string]bool{
		`{"action":"accept","content":{"name":"Ada"}}`: true,
		`{"action":"decline"}`:                         true,
		`{"action":"cancel","content":null}`:           true,
		`12345`:                                        false,
		`{"action":"maybe"}`:                           false,
		`{"action":"accept","content":[1]}`:            false,
		`{}`:                                           false,
	} {
		if err := CheckElicitResult(json.RawMessage(raw)); (err == nil) != ok {
			t.Errorf("elicitation %s: %v", raw, err)
		}
	}
	for raw, ok := range map[string]bool{
		`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`: true,
		`{"role":"assistant","content":[{"type":"text","text":"Paris"}]}`:           true,
		`{"role":"assistant"}`:        false,
		`{"content":{"type":"text"}}`: false,
		`{"action":"accept"}`:         false,
		`"Paris"`:                     false,
	} {
		if err := CheckSampleResult(json.RawMessage(raw)); (err == nil) != ok {
			t.Errorf("sampling %s: %v", raw, err)
		}
	}
}

// A roots answer is a list of file:// roots; an answer is checked for the
// shape of what its question asked.
func TestCheckRootsResult(t *testing.T) {
	for raw, ok := range map[string]bool{
		`{"roots":[{"uri":"file:///src","name":"src"}]}`: true,
		`{"roots":[]}`: true,
		`{}`:           false,
		`{"roots":[{"uri":"https://example.com"}]}`: false,
		`[1]`: false,
	} {
		if err := CheckRootsResult(json.RawMessage(raw)); (err == nil) != ok {
			t.Errorf("roots %s: %v", raw, err)
		}
	}
	if CheckAnswer(MethodRoots, json.RawMessage(`{"action":"accept"}`)) == nil ||
		CheckAnswer("", json.RawMessage(`{"roots":[]}`)) == nil ||
		CheckAnswer(MethodSample, json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"x"}}`)) != nil {
		t.Error("CheckAnswer does not check by method")
	}
}
