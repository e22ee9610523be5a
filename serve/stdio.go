package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/internal/syncio"
)

// serve on stdio. mcp-go serves the session (initialize, lists, prompts,
// resources, logging/setLevel, the requests serve sends the host), except
// the host's calls of f's tools, which are answered here: mcp-go decodes a
// tools/call message five times over (the line, three checks for answers
// to its own requests, the method, the protocol generation, the request)
// on a goroutine per line and a worker per call, which was half of serve's
// work on a call. Here a call is decoded once, run through the same
// front.call as mcp-go would run it, and its result written as the server
// wrote it.
//
// Only a plain call takes this path: a request of the current generation
// (2025-11-25 and before) on an initialized session, for a tool f lists,
// without a task and with no _meta but a progressToken. Any other
// tools/call, prompts/get and resources/read request is handed to mcp-go's
// MCPServer here, with the answerSlot that lets serve amend its answer
// (answers.go); every other message goes to mcp-go's stdio server
// unchanged and in order. A notifications/cancelled for a call answered
// here cancels it (and goes to mcp-go too, which cancels the others).

// serveStdio serves f on in and out until in ends or ctx is done.
func serveStdio(ctx context.Context, f *front, in io.Reader, out io.Writer) error {
	w := &syncio.Writer{W: out}
	toMCP, feed := io.Pipe()
	st := &stdioCalls{f: f, w: w, ready: make(chan struct{}), inflight: map[string]context.CancelFunc{}}
	ss := server.NewStdioServer(f.mcp)
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ss.SetContextFunc(func(sctx context.Context) context.Context {
		// The session's context: it names the session (notifications,
		// elicitation, the log level) and ends with it.
		st.once.Do(func() { st.ctx = sctx; close(st.ready) })
		return sctx
	})
	go func() {
		feed.CloseWithError(st.read(in, feed))
	}()
	err := ss.Listen(ctx, toMCP, w)
	toMCP.Close()
	st.wg.Wait()
	st.workers.stop()
	return err
}

// directWriteKey carries, in a call's context, the function that writes a
// notification to the host at once (forwarder.write).
type directWriteKey struct{}

// stdioCalls answers the plain tool calls of one stdio session.
type stdioCalls struct {
	f     *front
	w     *syncio.Writer
	once  sync.Once
	ready chan struct{}   // closed once ctx is set
	ctx   context.Context // the session's, from mcp-go
	wg    sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by JSON-RPC id, as written

	workers workers // run the calls
}

// read passes every line of in to mcp-go (feed) but the calls it answers.
func (st *stdioCalls) read(in io.Reader, feed io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && !st.take(line) && !st.amended(line) {
			if bytes.Contains(line, []byte(`notifications/cancelled`)) {
				st.cancelled(line)
			}
			if _, werr := feed.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(line) > 0 && line[len(line)-1] != '\n' {
					feed.Write([]byte("\n"))
				}
				return nil
			}
			return err
		}
	}
}

// amended runs line through mcp-go here, instead of passing it on, when it
// is a request whose answer serve may amend (answers.go): mcp-go's
// MCPServer serves it exactly as its stdio server would, on the session's
// context, with the request's answerSlot added.
func (st *stdioCalls) amended(line []byte) bool {
	slot := slotFor(line)
	if slot == nil {
		return false
	}
	<-st.ready // (set as mcp-go's Listen begins)
	if !slot.modern && !st.initialized() {
		return false // before the handshake: mcp-go answers it, in order
	}
	msg := json.RawMessage(bytes.TrimSpace(line))
	ctx := withSlot(st.ctx, slot)
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		var b []byte
		func() {
			defer func() {
				if r := recover(); r != nil {
					b = bytes.TrimSpace(errorResponse(idOf(msg), mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil))
				}
			}()
			resp := st.f.mcp.HandleMessage(ctx, msg)
			if resp == nil {
				return
			}
			var err error
			if b, err = json.Marshal(resp); err != nil {
				b = bytes.TrimSpace(errorResponse(idOf(msg), mcp.INTERNAL_ERROR, fmt.Sprintf("encode the response: %v", err), nil))
			}
		}()
		if b == nil {
			return
		}
		if out, _, changed := slot.amend(b); changed {
			b = out
		}
		_, _ = st.w.Write(append(b, '\n'))
	}()
	return true
}

// initialized reports whether the 2025-11-25 session is initialized,
// giving mcp-go a moment to read the notifications/initialized just
// passed on (a host may send its first request right behind it).
func (st *stdioCalls) initialized() bool {
	for range 50 {
		if cs := server.ClientSessionFromContext(st.ctx); cs != nil && cs.Initialized() {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// idOf is the id of a JSON-RPC request.
func idOf(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(msg, &m)
	return m.ID
}

// plainCall is the part of a tools/call message this path reads.
type plainCall struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
		Task      json.RawMessage            `json:"task"`
	} `json:"params"`
}

// take answers line here when it is a plain call of one of f's tools on an
// initialized session, and reports whether it did.
func (st *stdioCalls) take(line []byte) bool {
	if !bytes.Contains(line, []byte(`"tools/call"`)) {
		return false
	}
	select {
	case <-st.ready:
	default:
		return false // mcp-go has not started the session
	}
	if cs := server.ClientSessionFromContext(st.ctx); cs == nil || !cs.Initialized() {
		return false
	}
	m, e, token, ok := st.plain(line)
	if !ok {
		return false
	}
	id := string(m.ID)
	ctx, cancel := context.WithCancel(st.ctx)
	// The call's notifications are written here too, before its result.
	ctx = context.WithValue(ctx, directWriteKey{}, func(msg []byte) error {
		_, err := st.w.Write(msg)
		return err
	})
	st.mu.Lock()
	if _, dup := st.inflight[id]; dup {
		st.mu.Unlock()
		cancel()
		return false // mcp-go says what it thinks of a reused id
	}
	st.inflight[id] = cancel
	st.mu.Unlock()
	st.wg.Add(1)
	st.workers.run(func() {
		defer st.wg.Done()
		defer func() {
			st.mu.Lock()
			delete(st.inflight, id)
			st.mu.Unlock()
			cancel()
		}()
		st.answer(ctx, m.ID, e, m.Params.Arguments, token)
	})
	return true
}

// plain reads line as a plain call of one of f's tools: a tools/call
// request of the current generation, without a task, with no _meta but a
// progressToken (returned as written).
func (st *stdioCalls) plain(line []byte) (m plainCall, e entry, token mcp.ProgressToken, ok bool) {
	if json.Unmarshal(line, &m) != nil || m.JSONRPC != mcp.JSONRPC_VERSION || m.Method != string(mcp.MethodToolsCall) ||
		len(m.ID) == 0 || string(m.ID) == "null" || len(m.Params.Task) > 0 {
		return m, e, nil, false
	}
	for k, v := range m.Params.Meta {
		if k != "progressToken" {
			return m, e, nil, false // another generation's, or something mcp-go reads
		}
		token = v
	}
	e, ok = st.f.tool(m.Params.Name)
	return m, e, token, ok // not ok: mcp-go answers it (an unknown tool, a search tool)
}

// answer runs the call and writes its response.
func (st *stdioCalls) answer(ctx context.Context, id json.RawMessage, e entry, args json.RawMessage, token mcp.ProgressToken) {
	var body []byte
	func() {
		defer func() {
			if r := recover(); r != nil {
				body = errorResponse(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil)
			}
		}()
		res, err := st.f.call(ctx, e, args, token, mcp.MultiRoundTripParams{})
		if err != nil {
			// A JSON-RPC error for the host (answers.go); other failures
			// are isError results.
			var re *rpcError
			if errors.As(err, &re) {
				body = errorResponse(id, re.code, re.message, re.data)
			} else {
				body = errorResponse(id, mcp.INTERNAL_ERROR, err.Error(), nil)
			}
			return
		}
		body = make([]byte, 0, 256)
		body = append(body, `{"jsonrpc":"2.0","id":`...)
		body = append(body, id...)
		body = append(body, `,"result":`...)
		if body, err = appendToolResult(body, res); err != nil {
			body = errorResponse(id, mcp.INTERNAL_ERROR, fmt.Sprintf("encode the result: %v", err), nil)
			return
		}
		body = append(body, "}\n"...)
	}()
	if st.wasCancelled(id) {
		return // the host cancelled it: no response (MCP cancellation)
	}
	_, _ = st.w.Write(body)
}

// cancelled cancels the call a notifications/cancelled names, if it is
// answered here.
func (st *stdioCalls) cancelled(line []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Method != string(mcp.MethodNotificationCancelled) {
		return
	}
	st.mu.Lock()
	cancel := st.inflight[string(n.Params.RequestID)]
	if cancel != nil {
		st.inflight[string(n.Params.RequestID)] = nil // marks it cancelled by the host
	}
	st.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// wasCancelled reports whether the host cancelled the call with id.
func (st *stdioCalls) wasCancelled(id json.RawMessage) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	cancel, ok := st.inflight[string(id)]
	return ok && cancel == nil
}

func errorResponse(id json.RawMessage, code int, msg string, data json.RawMessage) []byte {
	e := map[string]any{"code": code, "message": msg}
	if len(data) > 0 && string(data) != "null" {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return append(b, '\n')
}
