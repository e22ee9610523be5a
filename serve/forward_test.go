package serve

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// session is one initialized mcp-go session and the context of a request of
// it, as a tool handler gets them.
func session(t *testing.T) (*server.MCPServer, *server.InProcessSession, context.Context) {
	t.Helper()
	srv := server.NewMCPServer("test", "1", server.WithLogging())
	cs := server.NewInProcessSession("s1", nil)
	cs.Initialize()
	return srv, cs, srv.WithContext(context.Background(), cs)
}

// queued takes what the session has queued for the host.
func queued(cs *server.InProcessSession) []mcp.JSONRPCNotification {
	var out []mcp.JSONRPCNotification
	for {
		select {
		case n := <-cs.ClientNotifications():
			out = append(out, n)
		default:
			return out
		}
	}
}

func TestForwardProgress(t *testing.T) {
	srv, cs, ctx := session(t)
	fw := &forwarder{srv: srv, ctx: ctx, logger: "everything", token: "host-7"}
	fw.frame(api.StreamFrame{Status: &api.CallStatus{State: api.CallStarting, Namespace: "everything"}})
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 1, Total: 4, Message: "step 1"}})
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 2}})
	got := queued(cs)
	if len(got) != 2 {
		t.Fatalf("queued %d notifications, want 2 (status frames are not forwarded): %+v", len(got), got)
	}
	for _, n := range got {
		if n.Method != string(mcp.MethodNotificationProgress) || n.Params.AdditionalFields["progressToken"] != "host-7" {
			t.Errorf("not a progress notification under the host's token: %+v", n)
		}
	}
	if f := got[0].Params.AdditionalFields; f["progress"] != 1.0 || f["total"] != 4.0 || f["message"] != "step 1" {
		t.Errorf("first progress: %+v", f)
	}
	if f := got[1].Params.AdditionalFields; f["progress"] != 2.0 || f["total"] != nil || f["message"] != nil {
		t.Errorf("progress of unknown total: %+v", f)
	}
	if fw.sent != 2 {
		t.Error("sent not recorded")
	}
	fw.flush() // the queue is empty: returns at once

	// Without a token the host did not ask for progress: nothing is sent.
	fw = &forwarder{srv: srv, ctx: ctx, logger: "everything"}
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 1, Total: 4}})
	if got := queued(cs); len(got) != 0 || fw.sent != 0 {
		t.Errorf("progress without a token: %+v", got)
	}
}

func TestForwardLog(t *testing.T) {
	srv, cs, ctx := session(t)
	fw := &forwarder{srv: srv, ctx: ctx, logger: "everything"} // logs need no token
	info := api.StreamFrame{Log: &api.LogMessage{Level: "info", Data: json.RawMessage(`"warming up"`)}}
	fail := api.StreamFrame{Log: &api.LogMessage{Level: "error", Logger: "db", Data: json.RawMessage(`{"code":7}`)}}

	// Until the host sets a level, mcp-go sends errors and worse.
	fw.frame(info)
	fw.frame(fail)
	got := queued(cs)
	if len(got) != 1 {
		t.Fatalf("at the default level: %+v", got)
	}
	b, _ := json.Marshal(got[0])
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Method != "notifications/message" || msg.Params.Level != "error" || msg.Params.Logger != "everything.db" || string(msg.Params.Data) != `{"code":7}` {
		t.Errorf("forwarded log: %s", b)
	}

	// logging/setLevel debug lets info through, named after the namespace.
	cs.SetLogLevel(mcp.LoggingLevelDebug)
	fw.frame(info)
	got = queued(cs)
	if len(got) != 1 {
		t.Fatalf("at level debug: %+v", got)
	}
	b, _ = json.Marshal(got[0])
	_ = json.Unmarshal(b, &msg)
	if msg.Params.Level != "info" || msg.Params.Logger != "everything" || string(msg.Params.Data) != `"warming up"` {
		t.Errorf("forwarded log: %s", b)
	}
}

// On a namespace's own front (/mcp/NS) the server's logger is kept as is.
func TestForwardLogOwnLogger(t *testing.T) {
	for _, c := range []struct{ prefix, logger, want string }{
		{"", "db", "db"}, {"", "", ""}, {"ns", "", "ns"}, {"ns", "db", "ns.db"},
	} {
		n := logNotification(c.prefix, &api.LogMessage{Level: "info", Logger: c.logger})
		if n.Params.Logger != c.want {
			t.Errorf("prefix %q logger %q: %q, want %q", c.prefix, c.logger, n.Params.Logger, c.want)
		}
	}
}

// A call answered on stdio by stdio.go writes its notifications itself, at
// once and in order, log lines only at the session's level.
func TestForwardWritesDirectly(t *testing.T) {
	srv, cs, ctx := session(t)
	var lines []string
	fw := &forwarder{srv: srv, ctx: ctx, token: 7, write: func(b []byte) error { lines = append(lines, string(b)); return nil }}
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 1, Total: 2}})
	fw.frame(api.StreamFrame{Log: &api.LogMessage{Level: "info", Data: json.RawMessage(`"quiet"`)}})
	fw.frame(api.StreamFrame{Log: &api.LogMessage{Level: "error", Logger: "db", Data: json.RawMessage(`"loud"`)}})
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 2, Total: 2}})
	if got := queued(cs); len(got) != 0 {
		t.Errorf("queued with mcp-go: %+v", got)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":7,"total":2}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"db","data":"loud"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2,"progressToken":7,"total":2}}` + "\n",
	}
	if len(lines) != len(want) || fw.sent != 3 {
		t.Fatalf("wrote %d lines (sent %d): %q", len(lines), fw.sent, lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %s, want %s", i, lines[i], want[i])
		}
	}
	fw.flush() // nothing queued: returns at once
}

// On HTTP, flush waits until mcp-go's stream was flushed once per
// notification queued since the call's first.
func TestForwardFlushWaitsForTheStream(t *testing.T) {
	srv, cs, ctx := session(t)
	fc := &flushCounter{}
	fc.n.Store(5) // flushes before the call
	fw := &forwarder{srv: srv, ctx: context.WithValue(ctx, flushKey{}, fc), token: "t"}
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 1}})
	fw.frame(api.StreamFrame{Progress: &api.Progress{Progress: 2}})
	if n := len(queued(cs)); n != 2 || fw.sent != 2 || fw.base != 5 {
		t.Fatalf("queued %d, sent %d, base %d", n, fw.sent, fw.base)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		fc.n.Add(1)
		time.Sleep(20 * time.Millisecond)
		fc.n.Add(1)
	}()
	start := time.Now()
	fw.flush()
	if d := time.Since(start); fc.n.Load() != 7 {
		t.Fatalf("flush returned after %s with %d flushes, want 7", d, fc.n.Load())
	}
}
