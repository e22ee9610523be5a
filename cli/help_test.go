package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestToolHelpText(t *testing.T) {
	def := `{"name":"book","title":"Book a room","description":"Books a room.\nSecond line.",
	  "annotations":{"destructiveHint":true},
	  "inputSchema":{"type":"object","required":["room","when"],
	    "properties":{
	      "room":{"enum":["red","blue"],"description":"which room"},
	      "when":{"$ref":"#/$defs/slot"},
	      "guests":{"type":"array","items":{"type":"string"},"description":"names"},
	      "size":{"type":["integer","null"],"default":2},
	      "note":{"anyOf":[{"type":"string"},{"type":"null"}]}},
	    "$defs":{"slot":{"type":"object","required":["day"],"properties":{"day":{"type":"string","format":"date"},"hour":{"type":"integer"}}}}}}`
	var b strings.Builder
	if err := writeToolHelp(&b, api.Tool{Namespace: "hotel", Name: "book", Definition: json.RawMessage(def)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"hotel.book — Book a room\n",
		"(destructive: asks for confirmation unless --yes)",
		"  Books a room.\n  Second line.\n",
		`  room (one of "red" | "blue", required)` + "\n      which room\n",
		"  when (object, required)\n      day (string (date), required)\n      hour (integer, optional)\n",
		"  guests (array of string, optional)\n      names\n",
		"  size (integer | null, optional, default 2)\n",
		"  note (string | null, optional)\n",
		`EXAMPLE:` + "\n" + `  mcpx call hotel.book room=red 'when:={"day":"DAY"}'` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	// Required parameters come first, in the schema's order.
	if strings.Index(out, "  room (") > strings.Index(out, "  when (") || strings.Index(out, "  when (") > strings.Index(out, "  guests (") {
		t.Errorf("parameter order:\n%s", out)
	}
}
