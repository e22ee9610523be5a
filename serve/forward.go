package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// forwarder passes the frames of one streamed call on to the host session
// that made it: progress as notifications/progress under the host's
// progress token (nothing without one: the host did not ask), log messages
// as notifications/message, sent only at or above the level the host set
// with logging/setLevel ("error" until it sets one). Status frames
// (starting, calling) have no MCP counterpart and are dropped.
//
// Every notification reaches the host before the call's result. A call
// answered on stdio by stdio.go, and a call of a 2025-11-25 session over
// HTTP, writes its notifications itself, in order (write: on stdout, on
// the request's event stream); others go through mcp-go's session queue,
// and flush waits until they are out: on HTTP until the request's stream
// has been flushed once per notification (mcp-go's forwarder drops one it
// took off the queue but had not written when the result went), on stdio
// until the queue is empty.
type forwarder struct {
	srv *server.MCPServer
	ctx context.Context // the host's request: names its session
	// logger names the server's log lines: "" keeps the server's own
	// logger (a namespace's front), NS prefixes it (the aggregate).
	logger string
	token  mcp.ProgressToken
	// write, when set, writes a notification to the host at once.
	write func(msg []byte) error

	sent  int   // notifications handed on
	base  int64 // the HTTP stream's flushes before the first
	based bool
}

// frame forwards one frame; it runs on the call's goroutine and never
// blocks for long (mcp-go drops a notification its session cannot take).
func (f *forwarder) frame(fr api.StreamFrame) {
	switch {
	case fr.Progress != nil && f.token != nil:
		params := map[string]any{"progressToken": f.token, "progress": fr.Progress.Progress}
		if fr.Progress.Total > 0 {
			params["total"] = fr.Progress.Total
		}
		if fr.Progress.Message != "" {
			params["message"] = fr.Progress.Message
		}
		f.send(string(mcp.MethodNotificationProgress), params, func() error {
			return f.srv.SendNotificationToClient(f.ctx, string(mcp.MethodNotificationProgress), params)
		})
	case fr.Log != nil:
		n := logNotification(f.logger, fr.Log)
		if f.write != nil {
			if f.wantsLog(n.Params.Level) {
				f.send(n.Method, n.Params, nil)
			}
			return
		}
		// mcp-go filters by level itself, and says nothing when it does:
		// only a line the session's level admits is waited for.
		counted := f.wantsLog(n.Params.Level) && !modern(f.ctx)
		if counted {
			f.mark()
		}
		if f.srv.SendLogMessageToClient(f.ctx, n) == nil && counted {
			f.sent++
		}
	}
}

// send writes a notification directly (write) or queues it with mcp-go.
func (f *forwarder) send(method string, params any, queue func() error) {
	if f.write != nil {
		msg, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "method": method, "params": params})
		if err == nil && f.write(append(msg, '\n')) == nil {
			f.sent++
		}
		return
	}
	f.mark()
	if queue() == nil {
		f.sent++
	}
}

// mark notes the HTTP stream's flushes before the first notification is
// queued (the base flush waits from).
func (f *forwarder) mark() {
	if fc, ok := f.ctx.Value(flushKey{}).(*flushCounter); ok && !f.based {
		f.base, f.based = fc.n.Load(), true
	}
}

// modern reports whether the request is of the 2026-07-28 generation,
// whose log level is the request's own.
func modern(ctx context.Context) bool {
	info := server.RequestProtocolInfoFromContext(ctx)
	return info != nil && info.Modern
}

// wantsLog reports whether the session's level admits a log line of level
// (what mcp-go's SendLogMessageToClient checks).
func (f *forwarder) wantsLog(level mcp.LoggingLevel) bool {
	cs, ok := server.ClientSessionFromContext(f.ctx).(server.SessionWithLogging)
	return ok && cs.Initialized() && level.ShouldSendTo(cs.GetLogLevel())
}

// logNotification is a server's log message as the host sees it: level and
// data as the server sent them, the logger the server's own, or, with a
// prefix (the aggregate's namespace), named after it ("NS", or
// "NS.LOGGER" when the server named one) since the host sees one server
// where there are many.
func logNotification(prefix string, l *api.LogMessage) mcp.LoggingMessageNotification {
	logger := l.Logger
	switch {
	case prefix != "" && logger != "":
		logger = prefix + "." + logger
	case prefix != "":
		logger = prefix
	}
	var data any
	if len(l.Data) > 0 {
		data = l.Data
	}
	return mcp.NewLoggingMessageNotification(mcp.LoggingLevel(l.Level), logger, data)
}

// flush waits (a second at most) until the notifications queued for the
// call are written, so that they reach the host before the result.
func (f *forwarder) flush() {
	if f.sent == 0 || f.write != nil {
		return
	}
	deadline := time.Now().Add(time.Second)
	if fc, ok := f.ctx.Value(flushKey{}).(*flushCounter); ok {
		for fc.n.Load() < f.base+int64(f.sent) && time.Now().Before(deadline) && f.ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return
	}
	cs := server.ClientSessionFromContext(f.ctx)
	if cs == nil {
		return
	}
	ch := cs.NotificationChannel()
	for len(ch) > 0 && time.Now().Before(deadline) && f.ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
}

// flushKey carries an HTTP request's flushCounter in its context.
type flushKey struct{}

// flushCounter is an HTTP response as serve hands it to mcp-go. It counts
// the flushes (mcp-go flushes its event stream once per event written),
// and lets a 2025-11-25 call write its notifications on the request's own
// event stream itself (event), between mcp-go's writes: mcp-go queues a
// session's notifications on one channel that every open stream of the
// session reads (the host's GET stream, its other calls), so a call's
// progress could reach the host out of order, on another stream, or after
// the result.
type flushCounter struct {
	http.ResponseWriter
	n atomic.Int64
	// sse: the request is a tools/call whose host accepts an event stream
	// (Accept: text/event-stream); its headers say text/event-stream until
	// mcp-go says otherwise (a plain JSON answer, an error). They are set
	// before mcp-go runs: it sets its own without a lock.
	sse bool

	// slot, when set, may amend the answer (answers.go): the status
	// mcp-go writes is held until its body shows which it is.
	slot *answerSlot

	mu          sync.Mutex // serializes writes: mcp-go's and event's
	wroteHeader bool
	held        int // the status mcp-go wrote, held (slot)
}

func (w *flushCounter) Flush() {
	w.mu.Lock()
	if w.held != 0 {
		w.writeHeader(w.held)
	}
	w.mu.Unlock()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	w.n.Add(1)
}

// release writes the status mcp-go wrote without a body after it, if it
// is still held.
func (w *flushCounter) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != 0 {
		w.writeHeader(w.held)
	}
}

func (w *flushCounter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.slot != nil && !w.wroteHeader {
		w.held = status
		return
	}
	w.writeHeader(status)
}

// writeHeader writes the status once; mcp-go, which keeps its own record
// of having upgraded the answer to an event stream, may try again after
// event did (w.mu held).
func (w *flushCounter) writeHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *flushCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	status := http.StatusOK
	if w.held != 0 {
		status = w.held
	}
	if w.slot != nil {
		eventStream := strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
		if out, code, changed := w.slot.amendBody(p, eventStream); changed {
			if w.slot.modern && !eventStream {
				status = httpStatus(code)
			}
			w.Header().Del("Content-Length")
			w.writeHeader(status)
			if _, err := w.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	w.writeHeader(status)
	return w.ResponseWriter.Write(p)
}

// event writes msg (one JSON-RPC message) as an event of the response's
// stream and flushes it, upgrading the answer to an event stream first,
// and telling the session so (mcp-go then writes the result as an event
// too).
func (w *flushCounter) event(ctx context.Context, msg []byte) error {
	if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig); ok {
		cs.UpgradeToSSEWhenReceiveNotification()
	}
	w.mu.Lock()
	w.writeHeader(http.StatusOK) // with the headers ServeHTTP set (sse)
	_, err := fmt.Fprintf(w.ResponseWriter, "event: message\ndata: %s\n\n", bytes.TrimSpace(msg))
	w.mu.Unlock()
	w.Flush()
	return err
}

// directWriter is the function that writes a call's notifications on its
// own HTTP event stream (nil: not an HTTP request of a 2025-11-25 session
// whose host takes an event stream).
func directWriter(ctx context.Context) func([]byte) error {
	fc, ok := ctx.Value(flushKey{}).(*flushCounter)
	if !ok || !fc.sse || modern(ctx) {
		return nil
	}
	if _, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig); !ok {
		return nil
	}
	return func(msg []byte) error { return fc.event(ctx, msg) }
}

// Unwrap lets http.ResponseController reach the connection.
func (w *flushCounter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
