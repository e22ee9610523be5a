package serve

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// forwarder passes the frames of one streamed call on to the host session
// that made it: progress as notifications/progress under the host's
// progress token (nothing without one: the host did not ask), log messages
// as notifications/message, which mcp-go sends only at or above the level
// the host set with logging/setLevel ("error" until it sets one). Status
// frames (starting, calling) have no MCP counterpart and are dropped.
type forwarder struct {
	srv *server.MCPServer
	ctx context.Context // the host's request: names its session
	// logger names the server's log lines: "" keeps the server's own
	// logger (a namespace's front), NS prefixes it (the aggregate).
	logger string
	token  mcp.ProgressToken
	sent   bool
}

// frame forwards one frame; it runs on the call's goroutine and never
// blocks (mcp-go drops a notification its session cannot take).
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
		if f.srv.SendNotificationToClient(f.ctx, string(mcp.MethodNotificationProgress), params) == nil {
			f.sent = true
		}
	case fr.Log != nil:
		if f.srv.SendLogMessageToClient(f.ctx, logNotification(f.logger, fr.Log)) == nil {
			f.sent = true
		}
	}
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

// flush waits (a little) until the notifications forwarded for the call
// have left the session's queue, so that they reach the host before the
// result: on stdio, mcp-go writes notifications from a queue of their own
// while the result is written by the request's goroutine. (Over HTTP,
// mcp-go itself drains the queue before the response.)
func (f *forwarder) flush() {
	if !f.sent {
		return
	}
	cs := server.ClientSessionFromContext(f.ctx)
	if cs == nil {
		return
	}
	ch := cs.NotificationChannel()
	deadline := time.Now().Add(time.Second)
	for len(ch) > 0 && time.Now().Before(deadline) && f.ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
}
