package daemon

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A result frame written around the server's bytes says what encoding/json
// says, on one line, even for a result that spans lines.
func TestEncodeFrameWritesTheResultAsEncodingJSONDoes(t *testing.T) {
	frames := []api.StreamFrame{
		{Result: &api.CallResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":"<a> & \u00e9"}]}`)}},
		{Result: &api.CallResponse{Result: json.RawMessage("{\n  \"content\": [\r\n {\"type\": \"text\", \"text\": \"x\\ny\"}],\n  \"isError\": true\n}"), IsError: true}},
		{Result: &api.CallResponse{Result: json.RawMessage(`{"content":[]}`), Blobs: []api.Blob{{Index: 0, MimeType: "image/png"}}}},
		{Result: &api.CallResponse{Result: json.RawMessage(`null`), Task: &api.Task{TaskID: "t"}}},
		{Progress: &api.Progress{Progress: 1, Total: 2}},
		{Error: &api.Error{Error: "no", Code: api.CodeTimeout}},
	}
	for _, f := range frames {
		var got, want bytes.Buffer
		if err := encodeFrame(&got, nil, f); err != nil {
			t.Fatal(err)
		}
		if err := newEncoder(&want).Encode(f); err != nil {
			t.Fatal(err)
		}
		if bytes.Count(got.Bytes(), []byte("\n")) != 1 || bytes.IndexByte(got.Bytes(), '\r') >= 0 || got.Bytes()[got.Len()-1] != '\n' {
			t.Errorf("not one line: %q", got.String())
		}
		var g, w api.StreamFrame
		if err := json.Unmarshal(got.Bytes(), &g); err != nil {
			t.Fatalf("%v: %s", err, got.String())
		}
		json.Unmarshal(want.Bytes(), &w)
		if g.Result != nil {
			var gr, wr any
			json.Unmarshal(g.Result.Result, &gr)
			json.Unmarshal(w.Result.Result, &wr)
			if !reflect.DeepEqual(gr, wr) {
				t.Errorf("result: got %s, want %s", g.Result.Result, w.Result.Result)
			}
			g.Result.Result, w.Result.Result = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("got %s\nwant %s", got.String(), want.String())
		}
	}
}
