package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestSlotForReadsRequestsServeMayAmend(t *testing.T) {
	for _, c := range []struct {
		msg    string
		ok     bool
		uri    string
		modern bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://b"}}`, true, "a://b", false},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, true, "", true},
		{`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p"}}`, true, "", false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{}}`, false, "", false}, // a notification
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"tools/call"}}`, false, "", false},
		{`not json "resources/read"`, false, "", false},
	} {
		s := slotFor([]byte(c.msg))
		if (s != nil) != c.ok || (s != nil && (s.uri != c.uri || s.modern != c.modern)) {
			t.Errorf("slotFor(%s) = %+v", c.msg, s)
		}
	}
}

func TestAmendGivesTheRecordedAnswer(t *testing.T) {
	mcpGo := []byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"whatever the handler said"}}`)

	s := &answerSlot{}
	ctx := withSlot(context.Background(), s)
	err := fail(ctx, &rpcError{code: -32021, message: "needs sampling", data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)})
	var re *rpcError
	if !errors.As(err, &re) {
		t.Fatalf("fail returned %v", err)
	}
	out, code, changed := s.amend(mcpGo)
	if !changed || code != -32021 || string(out) != `{"jsonrpc":"2.0","id":5,"error":{"code":-32021,"message":"needs sampling","data":{"requiredCapabilities":{"sampling":{}}}}}` {
		t.Errorf("amend: %s %d %v", out, code, changed)
	}
	if httpStatus(code) != 400 || httpStatus(0) != 200 || httpStatus(mcp.METHOD_NOT_FOUND) != 404 {
		t.Error("httpStatus")
	}

	// A result in place of the error.
	s = &answerSlot{}
	ctx = withSlot(context.Background(), s)
	_ = answerWith(ctx, map[string]any{"resultType": "input_required"})
	out, code, changed = s.amend(mcpGo)
	if !changed || code != 0 || string(out) != `{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required"}}` {
		t.Errorf("amend with a result: %s %d %v", out, code, changed)
	}

	// Nothing recorded: unchanged, but a read's error names its URI.
	s = &answerSlot{}
	if out, _, changed := s.amend(mcpGo); changed || string(out) != string(mcpGo) {
		t.Errorf("amend without an answer: %s", out)
	}
	s = &answerSlot{uri: "test://nope"}
	notFound := []byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"resource not found"}}`)
	if out, code, changed := s.amend(notFound); !changed || code != -32002 || !strings.Contains(string(out), `"data":{"uri":"test://nope"}`) {
		t.Errorf("amend a read's error: %s", out)
	}
	// Results and notifications are never touched.
	for _, m := range []string{`{"jsonrpc":"2.0","id":5,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`} {
		if out, _, changed := s.amend([]byte(m)); changed || string(out) != m {
			t.Errorf("amend(%s) = %s", m, out)
		}
	}

	// An event stream: only the error's event changes.
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\nevent: message\ndata: " + string(notFound) + "\n\n"
	out, _, changed = s.amendBody([]byte(stream), true)
	if !changed || !strings.HasPrefix(string(out), "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"") ||
		!strings.Contains(string(out), `"data":{"uri":"test://nope"}}}`+"\n\n") {
		t.Errorf("amendBody: %q", out)
	}
}

// A server's "not found" is given in the host's generation, naming the URI
// the host asked for; its other errors keep their code.
func TestReadFailedSpeaksTheHostsGeneration(t *testing.T) {
	apiError := func(code int, data string) error {
		return &client.APIError{Body: api.Error{Code: api.CodeServerError, RPC: &api.RPCError{Code: code, Message: "m", Data: json.RawMessage(data)}}}
	}
	modernCtx := server.WithRequestProtocolInfo(context.Background(), &server.RequestProtocolInfo{Modern: true, ProtocolVersion: "2026-07-28"})
	for _, c := range []struct {
		ctx      context.Context
		err      error
		wantCode int
		wantData string
	}{
		{context.Background(), apiError(-32602, `{"uri":"note://x"}`), -32002, `{"uri":"mcpx://n/note://x"}`},
		{modernCtx, apiError(-32002, ``), -32602, `{"uri":"mcpx://n/note://x"}`},
		{modernCtx, apiError(-32602, `{"reason":"bad"}`), -32602, `{"reason":"bad","uri":"mcpx://n/note://x"}`},
		{context.Background(), apiError(-32603, `"text"`), -32603, `{"server":"text","uri":"mcpx://n/note://x"}`},
	} {
		var re *rpcError
		if err := readFailed(c.ctx, "mcpx://n/note://x", c.err, errors.New("wrapped")); !errors.As(err, &re) || re.code != c.wantCode || string(re.data) != c.wantData {
			t.Errorf("readFailed(%v) = %+v", c.err, re)
		}
	}
	plain := errors.New("wrapped")
	if err := readFailed(context.Background(), "u", &client.APIError{Body: api.Error{Code: api.CodeStartFailed}}, plain); err != plain {
		t.Errorf("an mcpx failure: %v", err)
	}
}

// Over HTTP the status mcp-go writes is held until its body shows whether
// serve amends the answer: a 2026-07-28 request's status then follows the
// amended code; a status without a body is written as it was.
func TestFlushCounterAmendsTheAnswer(t *testing.T) {
	rec := httptest.NewRecorder()
	slot := &answerSlot{modern: true}
	fc := &flushCounter{ResponseWriter: rec, slot: slot}
	_ = fail(withSlot(context.Background(), slot), &rpcError{code: -32021, message: "needs sampling"})
	fc.Header().Set("Content-Type", "application/json")
	fc.WriteHeader(http.StatusOK)
	fc.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}` + "\n"))
	fc.release()
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"code":-32021`) {
		t.Errorf("amended: %d %s", rec.Code, rec.Body)
	}

	rec = httptest.NewRecorder()
	fc = &flushCounter{ResponseWriter: rec, slot: &answerSlot{}}
	fc.WriteHeader(http.StatusAccepted)
	fc.release()
	if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
		t.Errorf("no body: %d %q", rec.Code, rec.Body)
	}
}
