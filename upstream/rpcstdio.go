package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/internal/jsonstr"
)

// stdioRPC is the JSON-RPC transport over a stdio server's pipes (a
// transport.BidirectionalInterface, in place of mcp-go's Stdio).
//
// One reader goroutine reads the server's stdout line by line, tells each
// line apart with scanLine and answers the waiting request from there: a
// result stays the bytes the server sent (copied out of the read buffer
// once), and only notifications and the server's own requests are decoded
// into mcp-go's types. Notifications reach their handler on the reader, in
// order, before any later response; each server request is answered on a
// goroutine of its own (a person may be asked). Every message is written
// with one Write, never interleaved with another.
//
// Semantics are mcp-go's: a line that is not a JSON object, or whose id or
// method is of the wrong type, is skipped; when stdout ends (EOF, a read
// error, a line over the bound) or Close is called, every waiting request
// fails with transport.ErrTransportClosed, as does every later one; a
// request whose context ends returns the context's error. After Close the
// reader hands nothing on but reads stdout to its end, so a server that
// writes as it exits is never left blocked on a full pipe.
type stdioRPC struct {
	r io.Reader      // the server's stdout
	w io.WriteCloser // its stdin

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	pending map[rpcID]chan rpcReply
	closed  atomic.Bool // set under mu

	hmu       sync.RWMutex
	onNotice  func(mcp.JSONRPCNotification)
	onRequest transport.RequestHandler

	ctx       context.Context // Start's: bounds the server's requests
	started   sync.Once
	closeOnce sync.Once
	closeErr  error
}

// rpcReply is what a waiting request gets: a response, or why none comes.
type rpcReply struct {
	resp *transport.JSONRPCResponse
	err  error
}

// rpcID is a request id as a map key. Ids compare as mcp-go's do
// (RequestId.String): numbers by integer value, strings as strings,
// anything else by its string form.
type rpcID struct {
	kind byte // 'n' number, 's' string, 'o' other
	n    int64
	s    string
}

func idKey(id mcp.RequestId) rpcID {
	switch v := id.Value().(type) {
	case int64:
		return rpcID{kind: 'n', n: v}
	case string:
		return rpcID{kind: 's', s: v}
	case float64:
		if v == float64(int64(v)) {
			return rpcID{kind: 'n', n: int64(v)}
		}
	}
	return rpcID{kind: 'o', s: id.String()}
}

// rawIDKey is the key of an id as a line carries it; ok is false for a
// value that is no id (mcp-go skips such lines).
func rawIDKey(raw []byte) (rpcID, bool) {
	if n, ok := smallInt(raw); ok {
		return rpcID{kind: 'n', n: n}, true
	}
	var id mcp.RequestId
	if json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return rpcID{}, false
	}
	return idKey(id), true
}

// smallInt parses a plain decimal integer of up to 18 digits (every id
// mcpx sends), without allocating.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// newStdioRPC returns the transport over a server's stdout r and stdin w.
func newStdioRPC(r io.Reader, w io.WriteCloser) *stdioRPC {
	return &stdioRPC{r: r, w: w, pending: map[rpcID]chan rpcReply{}, ctx: context.Background()}
}

// Start starts the reader; ctx bounds the answers to the server's requests.
func (t *stdioRPC) Start(ctx context.Context) error {
	t.started.Do(func() {
		t.ctx = ctx
		go t.read()
	})
	return nil
}

// readBuffer is the reader's buffer; longer lines are gathered apart.
const readBuffer = 16 << 10

func (t *stdioRPC) read() {
	br := bufio.NewReaderSize(t.r, readBuffer)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if err != nil { // a last line without its newline is dropped, as mcp-go does
			t.shut()
			return
		}
		switch {
		case t.closed.Load():
			// Closed: nobody waits any more, but the server may still be
			// writing as it exits; keep its stdout drained until EOF.
			long = nil
		case long != nil:
			// A fresh slice nobody else writes: the result may stay in it.
			t.dispatch(append(long, line...), true)
			long = nil
		default:
			t.dispatch(line, false)
		}
	}
}

// dispatch handles one line; owned says whether slices of it may be kept
// (else the read buffer is reused and a result is copied out).
func (t *stdioRPC) dispatch(line []byte, owned bool) {
	m, ok := scanLine(line)
	if !ok {
		return
	}
	hasID := m.id != nil && string(m.id) != "null"
	var hasMethod bool
	if m.method != nil {
		if m.method[0] != '"' && string(m.method) != "null" {
			return // mcp-go skips a method that is not a string
		}
		hasMethod = len(m.method) > 2 // neither "" nor null
	}
	switch {
	case hasMethod && hasID:
		t.serverRequest(line)
	case hasMethod:
		t.notification(line)
	case hasID:
		t.response(m, owned)
	}
}

func (t *stdioRPC) response(m rpcLine, owned bool) {
	key, ok := rawIDKey(m.id)
	if !ok {
		return
	}
	resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION}
	if m.err != nil && string(m.err) != "null" {
		resp.Error = new(mcp.JSONRPCErrorDetails)
		if json.Unmarshal(m.err, resp.Error) != nil {
			return // mcp-go skips a response it cannot decode
		}
	}
	if m.result != nil {
		resp.Result = m.result
		if !owned {
			resp.Result = bytes.Clone(m.result)
		}
	}
	t.mu.Lock()
	ch := t.pending[key]
	delete(t.pending, key)
	t.mu.Unlock()
	if ch != nil {
		ch <- rpcReply{resp: resp} // buffered, and the only send
	}
}

func (t *stdioRPC) notification(line []byte) {
	var n mcp.JSONRPCNotification
	if json.Unmarshal(line, &n) != nil {
		return
	}
	t.hmu.RLock()
	h := t.onNotice
	t.hmu.RUnlock()
	if h != nil {
		h(n)
	}
}

func (t *stdioRPC) serverRequest(line []byte) {
	var in struct {
		ID     mcp.RequestId   `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &in) != nil {
		return
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: in.ID, Method: in.Method}
	if in.Params != nil {
		req.Params = in.Params
	}
	t.hmu.RLock()
	h := t.onRequest
	t.hmu.RUnlock()
	if h == nil {
		t.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "No request handler configured", nil))
		return
	}
	go t.answer(h, req)
}

// answer runs the handler for a server's request and writes its answer.
func (t *stdioRPC) answer(h transport.RequestHandler, req transport.JSONRPCRequest) {
	if err := t.ctx.Err(); err != nil {
		t.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
		return
	}
	resp, err := h(t.ctx, req)
	if err != nil {
		resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
	}
	if resp != nil {
		t.respond(resp)
	}
}

// respond writes an answer to a server's request (best effort: a server
// that is gone gets none).
func (t *stdioRPC) respond(resp *transport.JSONRPCResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_ = t.write(append(b, '\n'))
}

// shut fails every waiting request and refuses new ones.
func (t *stdioRPC) shut() {
	t.mu.Lock()
	t.closed.Store(true)
	waiting := t.pending
	t.pending = map[rpcID]chan rpcReply{}
	t.mu.Unlock()
	for _, ch := range waiting {
		ch <- rpcReply{err: transport.ErrTransportClosed}
	}
}

func (t *stdioRPC) write(b []byte) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	_, err := t.w.Write(b)
	return err
}

// SendRequest writes req and waits for its response.
func (t *stdioRPC) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := appendRequest(make([]byte, 0, 128+rawLen(req.Params)), req)
	if err != nil {
		return nil, fmt.Errorf("encode request %s: %w", req.Method, err)
	}
	key := idKey(req.ID)
	ch := make(chan rpcReply, 1)
	t.mu.Lock()
	if t.closed.Load() {
		t.mu.Unlock()
		return nil, transport.ErrTransportClosed
	}
	t.pending[key] = ch
	t.mu.Unlock()
	if err := t.write(line); err != nil {
		t.forget(key, ch)
		return nil, fmt.Errorf("write request %s: %w", req.Method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		r.resp.ID = req.ID
		return r.resp, nil
	case <-ctx.Done():
		t.forget(key, ch)
		return nil, ctx.Err()
	}
}

// forget drops a request that no longer waits (unless the id was taken
// again since).
func (t *stdioRPC) forget(key rpcID, ch chan rpcReply) {
	t.mu.Lock()
	if t.pending[key] == ch {
		delete(t.pending, key)
	}
	t.mu.Unlock()
}

// SendNotification writes n.
func (t *stdioRPC) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if t.closed.Load() {
		return transport.ErrTransportClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode notification %s: %w", n.Method, err)
	}
	if err := t.write(append(b, '\n')); err != nil {
		return fmt.Errorf("write notification %s: %w", n.Method, err)
	}
	return nil
}

// SetNotificationHandler sets who hears the server's notifications (called
// on the reader: it must not block).
func (t *stdioRPC) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.hmu.Lock()
	t.onNotice = h
	t.hmu.Unlock()
}

// SetRequestHandler sets who answers the server's requests.
func (t *stdioRPC) SetRequestHandler(h transport.RequestHandler) {
	t.hmu.Lock()
	t.onRequest = h
	t.hmu.Unlock()
}

// Close fails every waiting request and closes the server's stdin (its
// stdout is the caller's to close).
func (t *stdioRPC) Close() error {
	t.shut()
	t.closeOnce.Do(func() { t.closeErr = t.w.Close() })
	return t.closeErr
}

// GetSessionId is "": stdio has no sessions.
func (t *stdioRPC) GetSessionId() string { return "" }

// appendRequest appends req as one line. Params that are already JSON
// (json.RawMessage) are appended as they are, checked and, if they span
// lines, compacted; anything else is encoded with encoding/json.
func appendRequest(b []byte, req transport.JSONRPCRequest) ([]byte, error) {
	b = append(b, `{"jsonrpc":`...)
	b = jsonstr.Append(b, req.JSONRPC)
	b = append(b, `,"id":`...)
	switch v := req.ID.Value().(type) {
	case int64:
		b = strconv.AppendInt(b, v, 10)
	case string:
		b = jsonstr.Append(b, v)
	default:
		id, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, id...)
	}
	b = append(b, `,"method":`...)
	b = jsonstr.Append(b, req.Method)
	if req.Params != nil { // a nil interface only, as encoding/json's omitempty
		b = append(b, `,"params":`...)
		var err error
		if b, err = appendParams(b, req.Params); err != nil {
			return nil, err
		}
	}
	return append(b, "}\n"...), nil
}

func appendParams(b []byte, params any) ([]byte, error) {
	raw, ok := params.(json.RawMessage)
	if !ok {
		enc, err := json.Marshal(params)
		return append(b, enc...), err
	}
	switch {
	case len(raw) == 0:
		return append(b, "null"...), nil
	case !json.Valid(raw):
		return nil, fmt.Errorf("params are not valid JSON")
	case bytes.ContainsAny(raw, "\r\n"):
		buf := bytes.NewBuffer(b)
		err := json.Compact(buf, raw)
		return buf.Bytes(), err
	}
	return append(b, raw...), nil
}

// rawLen is the size of params already encoded (0 for anything else).
func rawLen(params any) int {
	raw, _ := params.(json.RawMessage)
	return len(raw)
}
