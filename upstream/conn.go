package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/jsonstr"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// conn is one connection to a server instance, of either protocol
// generation (generation.go). Requests go straight through the transport
// (stdioRPC for stdio, mcp-go's over HTTP) as raw JSON so nothing the
// server sends is lost to typed decoding; the connection answers the server's own requests (ping,
// elicitation, roots, sampling: inquiry.go) itself.
type conn struct {
	server string
	url    string // network transports: what redact hides secrets of
	sse    bool   // the HTTP+SSE transport (the older generation only)
	tr     transport.Interface
	proc   *proc           // stdio only
	pipes  *stdioPipes     // stdio only
	limit  int64           // maxMessageBytes
	forget func()          // stdio: drops the process group's record
	hlimit *limitTransport // network transports: bounds messages
	nextID atomic.Int64

	protocolVersion string
	modern          bool   // 2026-07-28 or later: requests carry _meta
	meta            []byte // the _meta members of every request (modern)
	serverInfo      json.RawMessage
	instructions    string
	caps            mcp.ServerCapabilities

	roots   json.RawMessage // the roots/list result offered ("" when none)
	inquire func(ctx context.Context, cn *conn, q Inquiry) (json.RawMessage, error)
	// reply sends an answer to a server's request ourselves (streamable
	// HTTP: mcp-go's transport gives its handler 30 seconds, too short
	// for a person).
	reply func(ctx context.Context, resp *transport.JSONRPCResponse) error

	listenMu  sync.Mutex // guards listen, acks (listen.go)
	listen    *listenStream
	acks      map[int64]*listenStream // streams awaiting their acknowledgement, by request id
	listening atomic.Bool             // the server acknowledged a stream

	cancelBG context.CancelFunc // ends long-lived transport streams
	stopOnce sync.Once
	stopped  chan struct{}
	notes    sync.WaitGroup // cancellation notices in flight
}

// dialParams is what dial needs besides the spec.
type dialParams struct {
	spec            Spec
	dir             string // working directory of a stdio server
	protocolVersion string // version to ask for
	callTimeout     time.Duration
	startTimeout    time.Duration
	onNotification  func(*conn, mcp.JSONRPCNotification)
	// inquire answers what the server asks mcpx (elicitation, sampling)
	// outside a 2026-07-28 call's own round trips (inquiry.go).
	inquire func(ctx context.Context, cn *conn, q Inquiry) (json.RawMessage, error)
	auth    *auth.Manager // OAuth for network transports; may be nil
	// onSpawn is told a stdio server's pid (its process group) once it
	// started; the func it returns is called once the group is stopped.
	onSpawn func(pid int) (stopped func())
}

// httpClient is the client a network transport uses over base: with
// OAuth when the pool set has a token manager.
func (dp dialParams) httpClient(base http.RoundTripper) *http.Client {
	if dp.auth == nil {
		return &http.Client{Transport: base}
	}
	srv := dp.spec.Server
	return &http.Client{Transport: dp.auth.RoundTripper(auth.Server{
		Hash: dp.spec.Hash, Name: serverName(dp.spec), URL: srv.URL, Headers: srv.Headers, Auth: srv.Options.Auth,
	}, base)}
}

// quietLogger keeps mcp-go's transports from writing to the daemon's stderr.
var quietLogger = slog.New(slog.DiscardHandler)

// firstRequestID is the first id of our requests (any start would do:
// every request on the transport is ours).
const firstRequestID = 1 << 20

// dial starts a server (or connects to it) and settles the protocol with
// it (handshake), all bounded by ctx. On error everything started is
// stopped and the stderr tail is returned with the error.
func dial(ctx context.Context, dp dialParams, grace time.Duration) (*conn, string, error) {
	cn, tail, err := dialRaw(ctx, dp, grace)
	if errors.Is(err, errProbeBroke) && ctx.Err() == nil {
		// The probe ended the server: start it again for the handshake.
		dp.protocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		cn, tail, err = dialRaw(ctx, dp, grace)
	}
	return cn, tail, redact(err, dp.spec.Server.URL)
}

func dialRaw(ctx context.Context, dp dialParams, grace time.Duration) (*conn, string, error) {
	srv := dp.spec.Server
	cn := &conn{server: serverName(dp.spec), stopped: make(chan struct{}), limit: maxMessageOf(srv),
		sse: sseTransport(srv), roots: rootsResult(dp.spec.Roots), inquire: dp.inquire}
	if srv.Transport == config.TransportHTTP || srv.Transport == config.TransportSSE {
		cn.url = srv.URL
	}
	cn.nextID.Store(firstRequestID)

	var err error
	switch srv.Transport {
	case config.TransportStdio, "":
		env := processEnv(dp.spec.Env, srv.Env)
		if cn.proc, err = newProc(srv, env, dp.dir); err != nil {
			return nil, "", err
		}
		if cn.pipes, err = startStdio(cn.proc, cn.limit); err != nil {
			cn.proc.started()
			return nil, "", fmt.Errorf("start transport: %w", err)
		}
		if dp.onSpawn != nil {
			cn.forget = dp.onSpawn(cn.proc.cmd.Process.Pid)
		}
		cn.tr = newStdioRPC(cn.pipes.out, cn.pipes.in)
	case config.TransportHTTP:
		cn.hlimit = &limitTransport{base: http.DefaultTransport, max: cn.limit}
		hc := dp.httpClient(cn.hlimit)
		cn.reply = cn.replier(hc, srv)
		cn.tr, err = transport.NewStreamableHTTP(srv.URL,
			transport.WithHTTPBasicClient(hc),
			transport.WithHTTPHeaders(srv.Headers),
			// The GET stream is how list_changed reaches a 2025-11-25
			// session; mcp-go opens it only once a handshake made one
			// (on 2026-07-28, subscriptions/listen does that job).
			//lint:ignore SA1019 kept on purpose for 2025-11-25 sessions (above)
			transport.WithContinuousListening(),
			transport.WithHTTPLogger(quietLogger))
	case config.TransportSSE:
		cn.hlimit = &limitTransport{base: http.DefaultTransport, max: cn.limit}
		cn.tr, err = transport.NewSSE(srv.URL,
			transport.WithHTTPClient(dp.httpClient(cn.hlimit)),
			transport.WithHeaders(srv.Headers),
			transport.WithEndpointTimeout(dp.startTimeout),
			transport.WithResponseTimeout(dp.callTimeout+time.Minute),
			transport.WithSSELogger(quietLogger))
	default:
		err = fmt.Errorf("unknown transport %q", srv.Transport)
	}
	if err != nil {
		return nil, "", err
	}
	if cn.hlimit != nil {
		tr := cn.tr
		cn.hlimit.onTrip = func() { go tr.Close() }
	}

	// Handlers first: the server may ask or tell us things as soon as the
	// transport runs.
	cn.tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationSubscriptionsAcknowledged {
			cn.acknowledged(n)
			return
		}
		if dp.onNotification != nil {
			dp.onNotification(cn, n)
		}
	})
	if bi, ok := cn.tr.(transport.BidirectionalInterface); ok {
		bi.SetRequestHandler(cn.serveRequest)
	}

	// The transport's streams outlive ctx, but until the handshake is done
	// ending ctx ends them too: SSE's Start waits for its endpoint event on
	// bg, and a timeout, a caller giving up or Close must cut that short.
	bg, cancel := context.WithCancel(context.Background())
	cn.cancelBG = cancel
	unhook := context.AfterFunc(ctx, cancel)
	err = cn.tr.Start(bg)
	if cn.proc != nil {
		cn.proc.started()
	}
	if err != nil {
		tail := cn.stop(grace)
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, tail, fmt.Errorf("start transport: %w", err)
	}

	err = cn.handshake(ctx, dp)
	if err == nil && !unhook() {
		err = ctx.Err() // ended as the handshake finished: streams are gone
	}
	if err != nil {
		if errors.Is(err, errProbeBroke) {
			cn.stop(grace)
			return nil, "", err
		}
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		tail := cn.stop(grace)
		if cn.proc != nil && cn.proc.out != nil {
			if junk := cn.proc.out.junk(); junk != "" {
				err = fmt.Errorf("%w; the server wrote on stdout what is not JSON-RPC (stdout carries only the protocol; logs belong on stderr): %s", err, junk)
			}
		}
		return nil, tail, err
	}
	if cn.modern {
		cn.startListening()
	}
	return cn, "", nil
}

// replier sends a JSON-RPC response to a streamable HTTP server s the way
// mcp-go's transport does (POST, the session and protocol headers, the
// entry's headers, through hc with its OAuth and limits).
func (cn *conn) replier(hc *http.Client, s *config.Server) func(context.Context, *transport.JSONRPCResponse) error {
	return func(ctx context.Context, resp *transport.JSONRPCResponse) error {
		body, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id := cn.tr.GetSessionId(); id != "" {
			req.Header.Set(mcp.HeaderSessionID, id)
		}
		if cn.protocolVersion != "" {
			req.Header.Set(mcp.HeaderProtocolVersion, cn.protocolVersion)
		}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			return redact(err, cn.url)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
			return fmt.Errorf("the server refused the answer: HTTP %d", res.StatusCode)
		}
		return nil
	}
}

// errTransport marks a request that failed below JSON-RPC: the connection
// is unusable.
type errTransport struct {
	err error
	// notSent: provably not a byte of the request reached the server.
	notSent bool
}

func (e *errTransport) Error() string { return e.err.Error() }
func (e *errTransport) Unwrap() error { return e.err }

// request sends one JSON-RPC request and returns its raw result. When ctx
// ends first the server is sent notifications/cancelled and ctx's error is
// returned. A JSON-RPC error is an *RPCError; anything else is an
// *errTransport. On a 2026-07-28 connection the params get the _meta every
// request carries, and over HTTP the standard headers.
func (cn *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return cn.requestWith(ctx, mcp.NewRequestId(cn.nextID.Add(1)), method, params, nil)
}

// requestID is request with the JSON-RPC id chosen by the caller (from
// cn.nextID).
func (cn *conn) requestID(ctx context.Context, id mcp.RequestId, method string, params any) (json.RawMessage, error) {
	return cn.requestWith(ctx, id, method, params, nil)
}

// requestOffering is request telling a 2026-07-28 server that the client
// offers o (a relay's host's capabilities) instead of the connection's
// default (o nil), as callTool does with Hooks.Offer.
func (cn *conn) requestOffering(ctx context.Context, method string, params any, o *Offer) (json.RawMessage, error) {
	return cn.requestWith(ctx, mcp.NewRequestId(cn.nextID.Add(1)), method, params, o)
}

// requestWith is request with its id and what the client offers chosen.
func (cn *conn) requestWith(ctx context.Context, id mcp.RequestId, method string, params any, o *Offer) (json.RawMessage, error) {
	var hdr http.Header
	if cn.modern {
		fields := cn.meta
		if o != nil && !cn.sse {
			fields = metaFields(cn.protocolVersion, cn.offered(*o))
		}
		b, err := withMeta(params, fields)
		if err != nil {
			return nil, fmt.Errorf("%s: encode params: %w", method, err)
		}
		params = b
		if cn.isHTTP() {
			name, _ := mcp.ExtractHeaderName(mcp.MCPMethod(method), b)
			hdr = standardHeaders(method, name)
		}
	}
	return cn.roundTripID(ctx, id, method, params, hdr, true)
}

// roundTrip sends one request as it is (params and headers final) and
// returns its raw result; see request. cancelOnEnd says whether ctx ending
// first sends notifications/cancelled.
func (cn *conn) roundTrip(ctx context.Context, method string, params any, hdr http.Header, cancelOnEnd bool) (json.RawMessage, error) {
	return cn.roundTripID(ctx, mcp.NewRequestId(cn.nextID.Add(1)), method, params, hdr, cancelOnEnd)
}

// roundTripID is roundTrip with the request's id chosen by the caller.
func (cn *conn) roundTripID(ctx context.Context, id mcp.RequestId, method string, params any, hdr http.Header, cancelOnEnd bool) (json.RawMessage, error) {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params, Header: hdr}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var written int64
	if cn.pipes != nil {
		written = cn.pipes.in.n.Load()
	}
	resp, err := cn.tr.SendRequest(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			if cancelOnEnd {
				cn.cancel(id, ctx.Err())
			}
			return nil, ctx.Err()
		}
		if (cn.pipes != nil && cn.pipes.out.tripped.Load()) || (cn.hlimit != nil && cn.hlimit.tripped.Load()) {
			return nil, &errTransport{err: &MessageTooLargeError{Server: cn.server, Limit: cn.limit}}
		}
		// Nothing written to stdin since before this request was read by
		// the server (not written at all, or still in the pipe of a server
		// that just exited): it never reached the server, and may be sent
		// again on a fresh instance.
		notSent := cn.neverRead(written)
		return nil, &errTransport{err: redact(err, cn.url), notSent: notSent}
	}
	if resp.Error != nil {
		re := &RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			re.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, re
	}
	return resp.Result, nil
}

// cancel tells the server to stop working on request id (best effort, off
// the caller's path). Over HTTP on 2026-07-28 ending the request's stream
// is the cancellation, and nothing is sent.
func (cn *conn) cancel(id mcp.RequestId, why error) {
	if cn.modern && cn.isHTTP() {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": id,
				"reason":    why.Error(),
			}},
		},
	}
	cn.notes.Add(1)
	go func() {
		defer cn.notes.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cn.tr.SendNotification(ctx, n)
	}()
}

// redact hides what a server URL may carry as secrets (its query and its
// password, often ${VAR} tokens) in err's text, which is logged and shown
// to users: net/http quotes the whole URL in its errors.
func redact(err error, rawURL string) error {
	if err == nil || rawURL == "" {
		return err
	}
	u, perr := url.Parse(rawURL)
	if perr != nil { // do not guess which part is secret
		return &redactedError{msg: strings.ReplaceAll(err.Error(), rawURL, "[redacted URL]"), err: err}
	}
	msg := err.Error()
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, "?"+u.RawQuery, "?[redacted]")
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		msg = strings.ReplaceAll(msg, ":"+pw+"@", ":[redacted]@")
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is err with secrets taken out of its text.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// errCursorLoop is a paginated list whose cursor repeats.
var errCursorLoop = errors.New("list cursor repeats")

// cacheHints gathers the caching hints of list results (2026-07-28): the
// shortest ttlMs, and "private" when any result says so.
type cacheHints struct {
	ttl   *int64
	scope string
}

func (h *cacheHints) add(page map[string]json.RawMessage) {
	var ttl int64
	if v, ok := page["ttlMs"]; ok && json.Unmarshal(v, &ttl) == nil {
		ttl = max(ttl, 0)
		if h.ttl == nil || ttl < *h.ttl {
			h.ttl = &ttl
		}
	}
	var scope string
	if v, ok := page["cacheScope"]; ok && json.Unmarshal(v, &scope) == nil && scope != "" {
		if h.scope == "" || scope == string(mcp.CacheScopePrivate) {
			h.scope = scope
		}
	}
}

// listAll follows nextCursor through every page of a list method, keeping
// each item (field is "tools", "prompts" or "resources") as raw JSON and
// gathering each page's caching hints into hints.
func (cn *conn) listAll(ctx context.Context, method, field string, hints *cacheHints) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	seen := map[string]bool{}
	cursor := ""
	for {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := cn.request(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("%s: decode result: %w", method, err)
		}
		hints.add(page)
		var items []json.RawMessage
		if v, ok := page[field]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, fmt.Errorf("%s: decode %s: %w", method, field, err)
			}
		}
		if field == "tools" && cn.modern && cn.isHTTP() {
			items = withoutBadHeaderTools(items)
		}
		out = append(out, items...)
		var next string
		if v, ok := page["nextCursor"]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &next); err != nil {
				return nil, fmt.Errorf("%s: decode nextCursor: %w", method, err)
			}
		}
		if next == "" {
			return out, nil
		}
		if seen[next] || next == cursor {
			return nil, fmt.Errorf("%s: %w: %q", method, errCursorLoop, next)
		}
		seen[next] = true
		cursor = next
	}
}

// callTool sends one tools/call of tool with args: token is its
// progressToken ("" for none), extra are more top-level params (the
// answers of a multi round-trip retry). On a 2026-07-28 connection the
// _meta carries the protocol members, and the log level when the call is
// observed; over HTTP the headers name the tool (and mirror its
// x-mcp-header parameters).
func (cn *conn) callTool(ctx context.Context, tool string, args json.RawMessage, token string, h Hooks, extra map[string]json.RawMessage) (json.RawMessage, error) {
	method := string(mcp.MethodToolsCall)
	params := toolCallParams(tool, args, cn.callMeta(token, h))
	if !cn.modern {
		return cn.roundTrip(ctx, method, params, nil, true)
	}
	if len(extra) > 0 {
		var err error
		if params, err = mergeFields(params, extra); err != nil {
			return nil, fmt.Errorf("%s: encode params: %w", method, err)
		}
	}
	var hdr http.Header
	if cn.isHTTP() {
		hdr = standardHeaders(method, tool)
		if bytes.Contains(h.Tool, []byte("x-mcp-header")) {
			for k, v := range paramHeaders(h.Tool, params) {
				hdr[k] = v
			}
		}
	}
	return cn.roundTrip(ctx, method, params, hdr, true)
}

// callMeta is the _meta object of a tools/call (nil for none): the
// progressToken, and on a 2026-07-28 connection the log level when the
// call is observed and the protocol members.
func (cn *conn) callMeta(token string, h Hooks) []byte {
	if !cn.modern {
		if token == "" {
			return nil
		}
		return concat([]byte(`{"progressToken":`), jsonstr.Append(nil, token), []byte("}"))
	}
	meta := make([]byte, 0, len(cn.meta)+96)
	meta = append(meta, '{')
	if token != "" {
		level := h.LogLevel
		if level == "" {
			level = string(mcp.LoggingLevelInfo)
		}
		meta = append(meta, `"progressToken":`...)
		meta = jsonstr.Append(meta, token)
		meta = append(meta, `,"`+mcp.MetaKeyLogLevel+`":`...)
		meta = jsonstr.Append(meta, level)
		meta = append(meta, ',')
	}
	if h.Offer != nil && !cn.sse {
		meta = append(meta, metaFields(cn.protocolVersion, cn.offered(*h.Offer))...)
	} else {
		meta = append(meta, cn.meta...)
	}
	return append(meta, '}')
}

// toolCallParams is a tools/call's params as JSON, written directly: the
// transport checks args (and compacts them if they span lines) as it
// writes the request.
func toolCallParams(tool string, args, meta []byte) json.RawMessage {
	b := make([]byte, 0, len(tool)+len(args)+len(meta)+40)
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, tool)
	b = append(b, `,"arguments":`...)
	if len(args) == 0 {
		args = []byte("null")
	}
	b = append(b, args...)
	if meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	return append(b, '}')
}

// lost is closed when a stdio server's stderr reached EOF, which usually
// means it exited (confirm with answers); nil (never ready) for network
// transports.
func (cn *conn) lost() <-chan struct{} {
	if cn.proc == nil {
		return nil
	}
	return cn.proc.exited
}

// drained waits (at most d) until everything a stdio server wrote to its
// stdout has been read, so answers it sent just before exiting reach their
// callers before the connection is closed.
func (cn *conn) drained(d time.Duration) {
	if cn.pipes == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-cn.pipes.out.done:
	case <-t.C:
	}
}

// answers reports whether the server still answers a ping (server/discover
// on 2026-07-28, which has no ping). A server may close or redirect its
// stderr and keep serving, so stderr EOF alone does not prove it exited; a
// dead one fails the ping at once (stdin or stdout is closed), a wedged one
// within the bound.
func (cn *conn) answers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	method := mcp.MethodPing
	if cn.modern {
		method = mcp.MethodServerDiscover
	}
	_, err := cn.request(ctx, string(method), nil)
	var re *RPCError
	return err == nil || errors.As(err, &re)
}

// stderrTail is a stdio server's stderr tail after it exited ("" otherwise).
func (cn *conn) stderrTail() string {
	if cn.proc == nil {
		return ""
	}
	return cn.proc.stderrTail(2 * time.Second)
}

// stop ends the connection: for stdio, stdin close → wait → SIGTERM to the
// group → wait → SIGKILL to the group. It returns the stderr tail.
// Idempotent; later calls wait for the first to finish.
func (cn *conn) stop(grace time.Duration) string {
	cn.stopOnce.Do(func() {
		cn.stopListening()
		closed := make(chan struct{}) // transport closed and the leader reaped
		go func() {
			_ = cn.tr.Close() // stdio: closes stdin
			if cn.proc != nil && cn.proc.waited != nil {
				<-cn.proc.waited
			}
			close(closed)
		}()
		if cn.proc != nil {
			cn.proc.stopGroup(closed, grace)
		}
		<-closed
		if cn.pipes != nil {
			_ = cn.pipes.raw.Close() // a grandchild may still hold stdout
		}
		if cn.forget != nil {
			cn.forget()
		}
		cn.notes.Wait()
		cn.cancelBG()
		close(cn.stopped)
	})
	<-cn.stopped
	if cn.proc != nil {
		return cn.proc.stderrTail(grace)
	}
	return ""
}

func serverName(spec Spec) string {
	if spec.Server != nil && spec.Server.Name != "" {
		return spec.Server.Name
	}
	return string(spec.Hash)
}
