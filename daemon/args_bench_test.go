package daemon

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// The cost a cached validator saves per call: compiling the input schema
// (what a per-request compile would pay) against typing and validating
// with the snapshot's compiled one.
func BenchmarkArgsCompileEachCall(b *testing.B) {
	tool, _ := toolOf("ns", json.RawMessage(argsTool))
	req := api.CallRequest{Pairs: []api.ArgPair{{Key: "a", Value: "1.5"}, {Key: "list", Value: "x"}, {Key: "point", Value: `{"x":1}`}}}
	for b.Loop() {
		if _, err := buildArgs("ns", "t", compileTool(tool), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgsCachedValidator(b *testing.B) {
	var x indexes
	snap := testSnapshot(argsTool)
	tool, _ := toolOf("ns", snap.Tools[0])
	req := api.CallRequest{Pairs: []api.ArgPair{{Key: "a", Value: "1.5"}, {Key: "list", Value: "x"}, {Key: "point", Value: `{"x":1}`}}}
	for b.Loop() {
		if _, err := buildArgs("ns", "t", x.get("0123456789abcdef", "d1", snap).derived.schemaOf(tool), req); err != nil {
			b.Fatal(err)
		}
	}
}
