package serve

import (
	"context"
	"encoding/json"
	"testing"
)

func TestStdioTakesPlainCallsOnly(t *testing.T) {
	f := &front{}
	f.served.Store(&map[string]entry{"demo.echo": {served: "demo.echo", ns: "demo", name: "echo"}})
	st := &stdioCalls{f: f}
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo.echo","arguments":{"text":"x"}}}`:                                true,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"demo.echo","_meta":{"progressToken":7}}}`:                           true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`:                                                              false, // not listed
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo.echo","task":{"ttl":1000}}}`:                                     false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo.echo","_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`: false,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"demo.echo"}}`:                                                                false, // no id
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"demo.echo"}}`:                                                      false,
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"demo.echo"}}`:                                                         false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                                                                       false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"`:                                                                                        false,
	} {
		if _, _, _, ok := st.plain([]byte(line)); ok != want {
			t.Errorf("%s: taken %v, want %v", line, ok, want)
		}
	}
	_, e, token, _ := st.plain([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo.echo","_meta":{"progressToken":"p-1"}}}`))
	if b, _ := json.Marshal(token); e.name != "echo" || string(b) != `"p-1"` {
		t.Errorf("entry %+v token %s", e, b)
	}
}

func TestStdioCancelled(t *testing.T) {
	st := &stdioCalls{inflight: map[string]context.CancelFunc{}}
	ctx, cancel := context.WithCancel(context.Background())
	st.inflight[`"a"`] = cancel
	st.cancelled([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user"}}`))
	if ctx.Err() == nil || !st.wasCancelled(json.RawMessage(`"a"`)) {
		t.Fatal("a cancelled call is not cancelled")
	}
	st.cancelled([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`))
	if st.wasCancelled(json.RawMessage(`"b"`)) {
		t.Error("a call not answered here counts as cancelled")
	}
}
