package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var namespacesAnswers = []string{
	`{"namespaces":[{"name":"demo","description":"Built-in demo server","transport":"stdio","sharing":"shared","scope":"global","serverHash":"0123456789abcdef","tools":7,"live":1,"replaced":2,"exitsAfterAnswer":true,"state":"cached","fetchedAt":"2026-12-01T12:00:00.123456789Z"},{"name":"idle","transport":"stdio","sharing":"shared","scope":"global","serverHash":"fedcba","source":"/h/.config/mcpx/config.json","tools":0,"live":0,"state":"unread"}]}`,
	`{"namespaces":[],"unavailableSources":[{"path":"/p/.cursor/mcp.json","host":"cursor","error":"x:1:2: bad"}]}`,
	`{"namespaces":[{"name":"e","state":"error","error":"fetch: \"boom\"\n\tline"}]}`,
	`{"namespaces":null}`,
	`{"namespaces":[{"name":"a","tools":1.5}]}`,
	`{"namespaces":[{"name":"a","tools":-0}]}`,
	`{"namespaces":[{"name":"a","Name":"b"}]}`,
	`{"namespaces":[{"name":"a","tools":1}],"namespaces":[{"name":"b"}]}`,
	`{"namespaces":[{"name":"a","fetchedAt":null}]}`,
	`{"namespaces":[{"name":"a","fetchedAt":"yesterday"}]}`,
	`{"NAMESPACES":[{"name":"a"}]}`,
	`{"namespaces":[{"name":"\ud800","tools":99999999999999999999}]}`,
	`[]`,
}

var toolsAnswers = []string{
	`{"namespace":{"name":"demo","tools":2,"state":"cached"},"tools":[{"namespace":"demo","name":"echo","description":"Echo.","annotations":{"readOnlyHint":true},"definition":{"name":"echo","inputSchema":{"type":"object"}}},{"namespace":"demo","name":"add"}]}`,
	`{"namespace":{"name":"x"},"tools":[]}`,
	`{"namespace":null,"tools":null}`,
	`{"tools":[{"name":"a","definition":null,"annotations":[1,2]}]}`,
	`{"tools":[{"name":"a","Definition":{}}]}`,
	`{"tools":[{"name":1}]}`,
}

var searchAnswers = []string{
	`{"query":"echo","results":[{"namespace":"demo","name":"echo","description":"Echo the given text back unchanged.","score":3.25,"why":[{"word":"echo","fields":["name","description"]},{"word":"ticket","via":"issue","fields":[]}]},{"namespace":"demo2","name":"echo","score":1e-3}],"unread":["idle002","idle003"]}`,
	`{"query":"x","results":[]}`,
	`{"query":"x","results":null,"unread":null}`,
	`{"results":[{"name":"a","score":1e999}]}`,
	`{"results":[{"name":"a","SCORE":1}]}`,
	`{"results":[{"name":"a","score":"1"}]}`,
	`{"unread":["a",1]}`,
	`{"results":[{"name":"a","why":null}]}`,
	`{"results":[{"name":"a","why":[{"word":"w","Fields":["x"]}]}]}`,
}

// decodeLikeJSON checks that decode answers what json.Unmarshal answers
// for data.
func decodeLikeJSON[T any](t *testing.T, data []byte, decode func([]byte) (*T, error)) {
	t.Helper()
	got, gotErr := decode(data)
	var want T
	wantErr := json.Unmarshal(data, &want)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(*got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, *got, want)
	}
}

func FuzzDecodeNamespaces(f *testing.F) {
	for _, a := range namespacesAnswers {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeLikeJSON(t, data, DecodeNamespaces) })
}

func FuzzDecodeTools(f *testing.F) {
	for _, a := range toolsAnswers {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeLikeJSON(t, data, DecodeTools) })
}

func FuzzDecodeSearch(f *testing.F) {
	for _, a := range searchAnswers {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeLikeJSON(t, data, DecodeSearch) })
}

// The daemon's answers are read without encoding/json.
func TestDecodeAnswersKnownShapes(t *testing.T) {
	for _, a := range namespacesAnswers[:3] {
		if _, known, err := decodeKnown([]byte(a), readNamespacesResponse); err != nil || !known {
			t.Errorf("%s: known %v, %v", a, known, err)
		}
	}
	for _, a := range toolsAnswers[:2] {
		if _, known, err := decodeKnown([]byte(a), readToolsResponse); err != nil || !known {
			t.Errorf("%s: known %v, %v", a, known, err)
		}
	}
	for _, a := range searchAnswers[:2] {
		if _, known, err := decodeKnown([]byte(a), readSearchResponse); err != nil || !known {
			t.Errorf("%s: known %v, %v", a, known, err)
		}
	}
}

var callRequests = []string{
	`{"namespace":"demo","tool":"echo","pairs":[{"key":"text","value":"hi"}],"cwd":"/w"}`,
	`{"namespace":"demo","tool":"add","arguments":{"a":1,"b":[2,"x"]},"pairs":[{"key":"c","value":"{\"d\":1}","json":true}],"noValidate":true,"raw":true,"stream":true,"session":"s","confirmed":true,"task":true,"detach":false}`,
	`{"namespace":"n","tool":"t","arguments":null}`,
	`{"namespace":"n","pairs":null}`,
	`{"namespace":"n","pairs":[{"key":"a","KEY":"b"}]}`,
	`{"namespace":"n","raw":null}`,
	`{"namespace":"n","Tool":"t"}`,
	`{"namespace":1}`,
	`{"pairs":[{"json":"yes"}]}`,
}

func FuzzDecodeCallRequest(f *testing.F) {
	for _, a := range callRequests {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeLikeJSON(t, data, DecodeCallRequest) })
}

func TestDecodeCallRequestKnownShapes(t *testing.T) {
	for _, a := range callRequests[:3] {
		if _, known, err := decodeKnown([]byte(a), readCallRequest); err != nil || !known {
			t.Errorf("%s: known %v, %v", a, known, err)
		}
	}
}

// The first line of a brief tool list (DecodeToolRows) is read like
// encoding/json reads it.
func FuzzDecodeRowsHead(f *testing.F) {
	for _, a := range []string{`{"namespace":{"name":"fx","tools":3,"state":"cached"}}`, `{"namespace":null}`, `{}`, `{"Namespace":{}}`, `{"namespace":{"name":"a"},"namespace":{"tools":1}}`} {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeLikeJSON(t, data, func(b []byte) (*rowsHead, error) {
			h, _, err := decodeKnown(b, readRowsHead)
			return h, err
		})
	})
}

// Every field of the types read by hand has its reader: a field added to
// one of them and not to its reader fails here (it would be dropped
// silently).
func TestReadersKnowEveryField(t *testing.T) {
	for _, c := range []struct {
		typ    any
		fields []string
	}{
		{NamespacesResponse{}, namespacesFields},
		{Namespace{}, namespaceFields},
		{ToolsResponse{}, toolsFields},
		{Tool{}, toolFields},
		{SearchHit{}, hitFields},
		{SearchMatch{}, matchFields},
		{SearchResponse{}, searchFields},
		{CallRequest{}, callRequestFields},
		{ArgPair{}, argPairFields},
		{rowsHead{}, []string{"namespace"}},
	} {
		want := jsonNames(reflect.TypeOf(c.typ))
		slices.Sort(want)
		got := slices.Sorted(slices.Values(c.fields))
		if !slices.Equal(got, want) {
			t.Errorf("%T: the reader knows %q, the type has %q", c.typ, got, want)
		}
	}
}

// jsonNames are the JSON member names of struct type t, embedded structs'
// promoted.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
