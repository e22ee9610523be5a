package serve

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// The stdio path writes a result with appendToolResult; it says what
// mcp-go's MarshalJSON says (the HTTP path), member for member, on one line.
func TestAppendToolResultSaysWhatMarshalSays(t *testing.T) {
	results := []string{
		`{"content":[{"type":"text","text":"a <b> \u00e9","x-extra":{"kept":true}}]}`,
		`{"_meta":{"progressToken":7,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[],"resultType":"complete"}`,
		"{\"content\":[\n  {\"type\": \"text\",\n   \"text\": \"spans\\nlines\"}\n],\n \"structuredContent\": {\"n\": 12345678901234567890,\n \"s\": [1, 2]}}",
		`{"content":[{"type":"resource","resource":{"uri":"demo://r/1","text":"one"}},{"type":"resource_link","uri":"demo://r/2","name":"two"}],"isError":true}`,
		`{"structuredContent":null,"isError":false}`,
		`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"st"}`,
	}
	for _, prefix := range []string{"", "ns"} {
		for _, res := range results {
			r := toolResult(&api.CallResponse{Result: json.RawMessage(res)}, prefix)
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendToolResult([]byte("x"), r)
			if err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			if got[0] != 'x' {
				t.Fatalf("%s: did not append: %s", res, got)
			}
			got = got[1:]
			if bytes.ContainsAny(got, "\r\n") {
				t.Errorf("%s: not one line: %s", res, got)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: %v: %s", res, err, got)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("prefix %q, %s:\n got %s\nwant %s", prefix, res, got, want)
			}
		}
	}
	// A result made here (an error) has typed content.
	r := mcp.NewToolResultError("no")
	want, _ := json.Marshal(r)
	got, err := appendToolResult(nil, r)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("error result: got %s (%v), want %s", got, err, want)
	}
}
