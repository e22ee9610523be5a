package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// plainCallRequest is CallRequest for encoding/json, to compare with.
type plainCallRequest CallRequest

// AppendCallRequest writes what json.Marshal writes: the same document,
// and an error for the same requests.
func FuzzAppendCallRequest(f *testing.F) {
	f.Add("demo", "echo", `{"text":"hi"}`, "text", "hi", false, "", "/w", byte(0))
	f.Add("n<s>", "t&\"\\", " { \"a\" : [1, 2.50, \"<\u2028>\"] } ", "k\x00", "v\xff", true, "sess", "/é", byte(0xff))
	f.Add("", "", `{`, "", "", false, "", "", byte(1))
	f.Fuzz(func(t *testing.T, ns, tool, args, key, value string, isJSON bool, session, cwd string, flags byte) {
		r := CallRequest{Namespace: ns, Tool: tool, Arguments: json.RawMessage(args), Session: session, Cwd: cwd,
			NoValidate: flags&1 != 0, Raw: flags&2 != 0, Stream: flags&4 != 0, Confirmed: flags&8 != 0,
			Task: flags&16 != 0, Detach: flags&32 != 0}
		if key != "" || value != "" {
			r.Pairs = []ArgPair{{Key: key, Value: value, JSON: isJSON}, {Key: value, Value: key}}
		}
		got, gotErr := AppendCallRequest(nil, &r)
		want, wantErr := json.Marshal(plainCallRequest(r))
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%+v: error %v, encoding/json %v", r, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%+v: wrote invalid JSON %s: %v", r, got, err)
		}
		if err := json.Unmarshal(want, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%+v:\n got %s\nwant %s", r, got, want)
		}
	})
}

// Every field of CallRequest is written: a field added to the struct and
// not to AppendCallRequest fails here.
func TestAppendCallRequestWritesEveryField(t *testing.T) {
	var r CallRequest
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if f.Type() == reflect.TypeOf(json.RawMessage(nil)) {
				f.SetBytes([]byte(`{"a":1}`))
			} else {
				f.Set(reflect.ValueOf([]ArgPair{{Key: "k", Value: "v", JSON: true}}))
			}
		default:
			t.Fatalf("field %s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	got, err := AppendCallRequest(nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	var back CallRequest
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip:\n got %+v\nwant %+v\n(%s)", back, r, got)
	}
}
