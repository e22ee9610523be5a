package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// Both interfaces conn.go asks of a stdio transport.
var _ transport.BidirectionalInterface = (*stdioRPC)(nil)

// startFixtureRPC runs the fixture on stdio with env added and returns the
// transport over its pipes, started, with the handshake (2025-11-25,
// offering elicitation) done. The process is stopped when the test ends.
func startFixtureRPC(t *testing.T, env ...string) (*stdioRPC, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(fixtureBin)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr := newStdioRPC(out, in)
	t.Cleanup(func() {
		tr.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rpc(t, tr, 1, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"0"}}`))
	if err := tr.SendNotification(context.Background(), mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "notifications/initialized"},
	}); err != nil {
		t.Fatal(err)
	}
	return tr, cmd
}

// rpc sends one request and returns its response, failing t on a
// transport error.
func rpc(t *testing.T, tr *stdioRPC, id int64, method string, params any) *transport.JSONRPCResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: method, Params: params})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// resultText is the first text content of a tools/call response.
func resultText(t *testing.T, resp *transport.JSONRPCResponse) string {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("error response: %+v", resp.Error)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	return res.Content[0].Text
}

// Requests of every shape reach the fixture and come back byte for byte:
// typed and raw params (raw ones spanning lines are compacted into one
// line), results as the server wrote them, JSON-RPC errors as errors.
func TestStdioRPCRequests(t *testing.T) {
	tr, _ := startFixtureRPC(t)
	list := rpc(t, tr, 2, "tools/list", nil)
	if !json.Valid(list.Result) || !bytes.Contains(list.Result, []byte(`"name":"echo"`)) {
		t.Fatalf("tools/list result %.200s", list.Result)
	}
	if got := list.ID.String(); got != "int64:2" {
		t.Errorf("response id %s, want int64:2", got)
	}
	raw := json.RawMessage("{\n  \"name\": \"echo\",\n  \"arguments\": {\"text\": \"a\\nb <&>\"}\n}")
	if got := resultText(t, rpc(t, tr, 3, "tools/call", raw)); got != "a\nb <&>" {
		t.Errorf("echo of raw params = %q", got)
	}
	typed := map[string]any{"name": "echo", "arguments": map[string]string{"text": "typed"}}
	if got := resultText(t, rpc(t, tr, 4, "tools/call", typed)); got != "typed" {
		t.Errorf("echo of typed params = %q", got)
	}
	bad := rpc(t, tr, 5, "no/such/method", nil)
	if bad.Error == nil || bad.Error.Code != mcp.METHOD_NOT_FOUND || bad.Result != nil {
		t.Errorf("unknown method: result %s, error %+v", bad.Result, bad.Error)
	}
	_, err := tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(6)), Method: "tools/call", Params: json.RawMessage(`{"name":`)})
	if err == nil || !strings.Contains(err.Error(), "tools/call") {
		t.Errorf("invalid raw params: %v, want an encoding error naming the method", err)
	}
}

// Concurrent requests each get their own answer.
func TestStdioRPCConcurrent(t *testing.T) {
	tr, _ := startFixtureRPC(t)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			want := fmt.Sprintf("call %d", i)
			params := json.RawMessage(fmt.Sprintf(`{"name":"echo","arguments":{"text":%q}}`, want))
			if got := resultText(t, rpc(t, tr, int64(100+i), "tools/call", params)); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	wg.Wait()
}

// A notification the server sends reaches the handler, decoded.
func TestStdioRPCNotification(t *testing.T) {
	tr, _ := startFixtureRPC(t)
	got := make(chan mcp.JSONRPCNotification, 1)
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) { got <- n })
	resultText(t, rpc(t, tr, 2, "tools/call", json.RawMessage(`{"name":"log","arguments":{"text":"hello"}}`)))
	select {
	case n := <-got:
		if n.Method != string(mcp.MethodNotificationMessage) || n.Params.AdditionalFields["data"] != "hello" {
			t.Errorf("notification %+v", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notification")
	}
}

// The server's own request (elicitation/create during a call) reaches the
// request handler with its params as sent, and the handler's answer
// reaches the server.
func TestStdioRPCServerRequest(t *testing.T) {
	tr, _ := startFixtureRPC(t)
	var got transport.JSONRPCRequest
	tr.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		got = req
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{"action":"accept","content":{"name":"Grace","age":40,"colour":"blue"}}`)), nil
	})
	text := resultText(t, rpc(t, tr, 2, "tools/call", json.RawMessage(`{"name":"ask_profile","arguments":{}}`)))
	if got.Method != string(mcp.MethodElicitationCreate) {
		t.Fatalf("handler got %q", got.Method)
	}
	params, ok := got.Params.(json.RawMessage)
	if !ok || !bytes.Contains(params, []byte(`"requestedSchema"`)) {
		t.Errorf("params %T %s", got.Params, got.Params)
	}
	if !strings.Contains(text, "accept") || !strings.Contains(text, "Grace") {
		t.Errorf("the tool answered %q, want the accepted profile", text)
	}
}

// A request whose context ends returns the context's error; Close fails
// waiting requests, and every later one, with ErrTransportClosed.
func TestStdioRPCCancelAndClose(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	tr, _ := startFixtureRPC(t, fixture.StartedLogEnv+"="+started)
	slow := json.RawMessage(`{"name":"slow","arguments":{"seconds":30}}`)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(2)), Method: "tools/call", Params: slow})
		errc <- err
	}()
	waitForFile(t, started)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want context.Canceled", err)
	}

	go func() {
		_, err := tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(3)), Method: "tools/call", Params: slow})
		errc <- err
	}()
	waitForLines(t, started, 2)
	tr.Close()
	if err := <-errc; !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request waiting at Close: %v, want ErrTransportClosed", err)
	}
	if _, err := tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(4)), Method: "ping"}); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request after Close: %v, want ErrTransportClosed", err)
	}
}

// A server that exits fails the request it was working on with
// ErrTransportClosed (stdout reached EOF).
func TestStdioRPCServerExit(t *testing.T) {
	tr, _ := startFixtureRPC(t)
	_, err := tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(2)), Method: "tools/call", Params: json.RawMessage(`{"name":"crash","arguments":{}}`)})
	if !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request to a crashing server: %v, want ErrTransportClosed", err)
	}
}

func waitForLines(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), "\n") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not %d lines: %q", path, n, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitForFile(t *testing.T, path string) { t.Helper(); waitForLines(t, path, 1) }

// What a server may write besides answers, over a pipe: lines that are
// not JSON-RPC are skipped, a notification written before a response is
// handled before the response reaches its request, ids match as mcp-go's do (1.0 is 1, "1" is
// not), a line longer than the read buffer arrives whole, and a last line
// without its newline is not taken.
func TestStdioRPCFraming(t *testing.T) {
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	requests := bufio.NewReader(inR)
	tr := newStdioRPC(outR, inW)
	var noticed atomic.Bool
	tr.SetNotificationHandler(func(mcp.JSONRPCNotification) { noticed.Store(true) })
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	send := func(id any) chan *transport.JSONRPCResponse {
		c := make(chan *transport.JSONRPCResponse, 1)
		go func() {
			resp, _ := tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(id), Method: "m"})
			c <- resp
		}()
		return c
	}
	first, second, third := send(int64(1)), send("s"), send(int64(3))
	for range 3 { // each request waits once it is written
		if _, err := requests.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("x", 3*readBuffer)
	for _, line := range []string{
		"starting up…",
		`{"jsonrpc":"2.0","id":"1","result":"a string id is not the number"}`,
		`{"jsonrpc":"2.0","id":true,"result":"no id"}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{"n":1}}`,
		`{"jsonrpc":"2.0","id":"s","result":"` + big + `"}`,
	} {
		fmt.Fprintln(outW, line)
	}
	if r := <-first; r == nil || string(r.Result) != `{"n":1}` {
		t.Errorf("id 1: %+v", r)
	}
	if !noticed.Load() {
		t.Error("the response reached its request before the notification written ahead of it was handled")
	}
	if r := <-second; r == nil || string(r.Result) != `"`+big+`"` {
		t.Errorf("id \"s\": a result of %d bytes", len(r.Result))
	}
	fmt.Fprint(outW, `{"jsonrpc":"2.0","id":3,"result":{}}`)
	outW.Close()
	if r := <-third; r != nil {
		t.Errorf("a last line without its newline was taken: %s", r.Result)
	}
}

// A request line says what encoding/json says of the same request, on one
// line.
func TestAppendRequest(t *testing.T) {
	for _, req := range []transport.JSONRPCRequest{
		{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1 << 20)), Method: "ping"},
		{JSONRPC: "2.0", ID: mcp.NewRequestId("a\"<b>"), Method: "tools/call", Params: json.RawMessage("{\n \"name\": \"x\",\r\n \"arguments\": {}}")},
		{JSONRPC: "2.0", ID: mcp.NewRequestId(1.5), Method: "méthode\n", Params: json.RawMessage(nil)},
		{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(-3)), Method: "x", Params: map[string]any{"cursor": "c", "n": 1}},
		{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(4)), Method: "x", Params: toolCallParams("t\u2028", []byte(`{"a":[1, 2]}`), []byte(`{"progressToken":"mcpx-1"}`))},
	} {
		line, err := appendRequest(nil, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Errorf("%q is not one line", line)
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var got, ref any
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		_ = json.Unmarshal(want, &ref)
		if !reflect.DeepEqual(got, ref) {
			t.Errorf("line %s, encoding/json %s", line, want)
		}
	}
}
