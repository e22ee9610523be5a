package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// conn is one initialized connection to a server instance. Requests go
// straight through the transport as raw JSON so nothing the server sends is
// lost to mcp-go's typed decoding; the mcp-go client does the handshake and
// answers the server's own requests (ping, ...).
type conn struct {
	server string
	url    string // network transports: what redact hides secrets of
	tr     transport.Interface
	c      *client.Client
	proc   *proc           // stdio only
	pipes  *stdioPipes     // stdio only
	limit  int64           // maxMessageBytes
	forget func()          // stdio: drops the process group's record
	hlimit *limitTransport // network transports: bounds messages
	nextID atomic.Int64

	protocolVersion string
	serverInfo      json.RawMessage
	instructions    string
	caps            mcp.ServerCapabilities

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
	auth            *auth.Manager // OAuth for network transports; may be nil
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

// firstRequestID keeps our raw request ids clear of the ids the mcp-go
// client uses for the handshake on the same transport.
const firstRequestID = 1 << 20

// dial starts a server (or connects to it) and runs the initialize
// handshake, all bounded by ctx. On error everything started is stopped and
// the stderr tail is returned with the error.
func dial(ctx context.Context, dp dialParams, grace time.Duration) (*conn, string, error) {
	cn, tail, err := dialRaw(ctx, dp, grace)
	return cn, tail, redact(err, dp.spec.Server.URL)
}

func dialRaw(ctx context.Context, dp dialParams, grace time.Duration) (*conn, string, error) {
	srv := dp.spec.Server
	cn := &conn{server: serverName(dp.spec), stopped: make(chan struct{}), limit: maxMessageOf(srv)}
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
		cn.tr = transport.NewIO(cn.pipes.out, cn.pipes.in, nil)
	case config.TransportHTTP:
		cn.hlimit = &limitTransport{base: http.DefaultTransport, max: cn.limit}
		cn.tr, err = transport.NewStreamableHTTP(srv.URL,
			transport.WithHTTPBasicClient(dp.httpClient(cn.hlimit)),
			transport.WithHTTPHeaders(srv.Headers),
			// Deprecated from protocol 2026-07-28, which mcpx never asks
			// for (startVersion): on the versions it speaks, the GET
			// stream is how list_changed reaches us.
			//lint:ignore SA1019 kept on purpose for the versions mcpx speaks (above)
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

	// The protocol is pinned to the initialize handshake: raw requests
	// carry no per-request _meta and list_changed arrives unsolicited only
	// on a session-ful connection. Pinning a version before 2026-07-28
	// (startVersion) also means no server/discover probe, so no server
	// ever waits for one.
	cn.c = client.NewClient(cn.tr, client.WithProtocolVersion(dp.protocolVersion))
	if dp.onNotification != nil {
		cn.c.OnNotification(func(n mcp.JSONRPCNotification) { dp.onNotification(cn, n) })
	}

	// The transport's streams outlive ctx, but until the handshake is done
	// ending ctx ends them too: SSE's Start waits for its endpoint event on
	// bg, and a timeout, a caller giving up or Close must cut that short.
	bg, cancel := context.WithCancel(context.Background())
	cn.cancelBG = cancel
	unhook := context.AfterFunc(ctx, cancel)
	err = cn.c.Start(bg)
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

	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = dp.protocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpx", Version: version.String()}
	res, err := cn.c.Initialize(ctx, req)
	if err == nil && !unhook() {
		err = ctx.Err() // ended as the handshake finished: streams are gone
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("initialize: %w", ctx.Err())
		} else {
			err = fmt.Errorf("initialize: %w", err)
		}
		tail := cn.stop(grace)
		if cn.proc != nil && cn.proc.out != nil {
			if junk := cn.proc.out.junk(); junk != "" {
				err = fmt.Errorf("%w; the server wrote on stdout what is not JSON-RPC (stdout carries only the protocol; logs belong on stderr): %s", err, junk)
			}
		}
		return nil, tail, err
	}
	cn.protocolVersion = res.ProtocolVersion
	cn.instructions = res.Instructions
	cn.caps = res.Capabilities
	if b, err := json.Marshal(res.ServerInfo); err == nil {
		cn.serverInfo = b
	}
	return cn, "", nil
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
// *errTransport.
func (cn *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := mcp.NewRequestId(cn.nextID.Add(1))
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params}
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
			cn.cancel(id, ctx.Err())
			return nil, ctx.Err()
		}
		if (cn.pipes != nil && cn.pipes.out.tripped.Load()) || (cn.hlimit != nil && cn.hlimit.tripped.Load()) {
			return nil, &errTransport{err: &MessageTooLargeError{Server: cn.server, Limit: cn.limit}}
		}
		// Nothing written to stdin since before this request was read by
		// the server (not written at all, or still in the pipe of a server
		// that just exited): it never reached the server, and may be sent
		// again on a fresh instance.
		notSent := cn.pipes != nil && cn.pipes.in.unreadSince(written)
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
// the caller's path).
func (cn *conn) cancel(id mcp.RequestId, why error) {
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

// listAll follows nextCursor through every page of a list method, keeping
// each item (field is "tools", "prompts" or "resources") as raw JSON.
func (cn *conn) listAll(ctx context.Context, method, field string) ([]json.RawMessage, error) {
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
		var items []json.RawMessage
		if v, ok := page[field]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, fmt.Errorf("%s: decode %s: %w", method, field, err)
			}
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

// answers reports whether the server still answers a ping. A server may
// close or redirect its stderr and keep serving, so stderr EOF alone does not
// prove it exited; a dead one fails the ping at once (stdin or stdout is
// closed), a wedged one within the bound.
func (cn *conn) answers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := cn.request(ctx, string(mcp.MethodPing), nil)
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
