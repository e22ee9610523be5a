package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/client"
)

// Answers mcp-go cannot give. It reports every error a handler returns as
// -32603 with the error's text, and a resource handler returns contents
// only; but a host must get some failures as the JSON-RPC error they are (a
// server's own error, a MissingRequiredClientCapabilityError, a resource
// not found with the URI asked for), and a resources/read may be answered
// with an input_required result.
//
// So each host request that may need it (tools/call, prompts/get,
// resources/read) carries an answerSlot in its context, put there by the
// transport before mcp-go reads the request (stdio.go, http.go). A handler
// records in it the answer it means (fail, answerWith); the transport
// amends mcp-go's response on its way out:
//
//   - an error response becomes the recorded error, or a response with the
//     recorded result;
//   - an error answering resources/read that has no data gets data.uri, the
//     URI the host asked for (SEP-2164): mcp-go's own answer to a URI no
//     resource or template of the front matches has none.
//
// Over HTTP a 2026-07-28 request's status follows the error code, as
// mcp-go sets it for its own errors (400 for -32021 and -32602).

// rpcError is a JSON-RPC error for the host.
type rpcError struct {
	code    int
	message string
	data    json.RawMessage
}

func (e *rpcError) Error() string { return e.message }

// answerSlot is where a handler leaves the answer to one host request.
type answerSlot struct {
	uri    string // resources/read: the URI asked for
	modern bool   // a 2026-07-28 request

	mu     sync.Mutex
	err    *rpcError
	result json.RawMessage
}

type slotKey struct{}

func withSlot(ctx context.Context, s *answerSlot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

func slotOf(ctx context.Context) *answerSlot {
	s, _ := ctx.Value(slotKey{}).(*answerSlot)
	return s
}

// fail records e as the answer to ctx's request and returns it, the error
// for mcp-go (the stdio fast path writes it itself).
func fail(ctx context.Context, e *rpcError) error {
	if s := slotOf(ctx); s != nil {
		s.mu.Lock()
		s.err, s.result = e, nil
		s.mu.Unlock()
	}
	return e
}

// errNoSlot is a result a handler cannot return through mcp-go on a
// request that came without an answerSlot.
var errNoSlot = errors.New("serve cannot give this answer here")

// answerWith records result as the answer to ctx's request, for a handler
// whose return type cannot hold it, and returns the error for mcp-go,
// whose answer the transport replaces.
func answerWith(ctx context.Context, result any) error {
	s := slotOf(ctx)
	if s == nil {
		return errNoSlot
	}
	b, err := json.Marshal(result)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.err, s.result = nil, b
	s.mu.Unlock()
	return errNoSlot // (replaced)
}

// relayed is the error for mcp-go when the daemon failed a request with
// err: a server's JSON-RPC error (or the -32021 the daemon names, api.Error
// RPC) is recorded as the request's answer; anything else is wrapped as it
// is (mcp-go's -32603, with its text).
func relayed(ctx context.Context, err, wrapped error) error {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Body.RPC == nil {
		return wrapped
	}
	r := ae.Body.RPC
	return fail(ctx, &rpcError{code: r.Code, message: r.Message, data: r.Data})
}

// slotFor reads a message from the host: the answerSlot of a request whose
// answer serve may amend, or nil.
func slotFor(msg []byte) *answerSlot {
	if !bytes.Contains(msg, []byte(`"tools/call"`)) && !bytes.Contains(msg, []byte(`"prompts/get"`)) &&
		!bytes.Contains(msg, []byte(`"resources/read"`)) {
		return nil
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI  string                     `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil
	}
	s := &answerSlot{}
	switch mcp.MCPMethod(m.Method) {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
	case mcp.MethodResourcesRead:
		s.uri = m.Params.URI
	default:
		return nil
	}
	var version string
	_ = json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &version)
	s.modern = mcp.IsModernProtocol(version)
	return s
}

// amend returns the response msg (one JSON-RPC message) as the host must
// get it, with its error code (0: a result) and whether it changed.
func (s *answerSlot) amend(msg []byte) (out []byte, code int, changed bool) {
	var r struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &r) != nil || r.Method != "" || r.Error == nil {
		return msg, 0, false
	}
	s.mu.Lock()
	rec, result := s.err, s.result
	s.mu.Unlock()
	if result != nil {
		b, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{mcp.JSONRPC_VERSION, r.ID, result})
		if err != nil {
			return msg, r.Error.Code, false
		}
		return b, 0, true
	}
	e := *r.Error
	if rec != nil {
		e.Code, e.Message, e.Data = rec.code, rec.message, rec.data
	}
	if s.uri != "" && (len(e.Data) == 0 || string(e.Data) == "null") {
		e.Data, _ = json.Marshal(map[string]string{"uri": s.uri})
	}
	if rec == nil && bytes.Equal(e.Data, r.Error.Data) {
		return msg, e.Code, false
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{mcp.JSONRPC_VERSION, r.ID, e})
	if err != nil {
		return msg, r.Error.Code, false
	}
	return b, e.Code, true
}

// amendBody amends an HTTP response body written in one piece: a JSON
// document, or events of a stream (each data line one message).
func (s *answerSlot) amendBody(p []byte, eventStream bool) (out []byte, code int, changed bool) {
	if !eventStream {
		trimmed := bytes.TrimSpace(p)
		out, code, changed = s.amend(trimmed)
		if changed {
			out = append(out, '\n')
		}
		return out, code, changed
	}
	lines := bytes.SplitAfter(p, []byte("\n"))
	for i, line := range lines {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		a, c, ch := s.amend(bytes.TrimRight(data, "\r\n"))
		if ch {
			lines[i] = append(append([]byte("data: "), a...), '\n')
			code, changed = c, true
		}
	}
	if !changed {
		return p, 0, false
	}
	return bytes.Join(lines, nil), code, true
}

// httpStatus is the status of a 2026-07-28 response carrying the JSON-RPC
// error code (0: a result), as the transport prescribes it.
func httpStatus(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// readFailed is relayed for a resources/read of uri (as the host named
// it): a server's "resource not found" is given in the host's generation
// (-32602 from 2026-07-28 on, -32002 before, SEP-2164) with data.uri the
// URI the host asked for; the server's other errors keep their code.
func readFailed(ctx context.Context, uri string, err, wrapped error) error {
	var re *rpcError
	if !errors.As(relayed(ctx, err, wrapped), &re) {
		return wrapped
	}
	data := map[string]json.RawMessage{}
	if len(re.data) > 0 && json.Unmarshal(re.data, &data) != nil {
		data = map[string]json.RawMessage{"server": re.data} // not an object: kept under a name
	}
	_, named := data["uri"]
	if re.code == mcp.RESOURCE_NOT_FOUND || (re.code == mcp.INVALID_PARAMS && named) {
		re.code = mcp.RESOURCE_NOT_FOUND
		if modern(ctx) {
			re.code = mcp.INVALID_PARAMS
		}
	}
	data["uri"], _ = json.Marshal(uri)
	re.data, _ = json.Marshal(data)
	return fail(ctx, re)
}
