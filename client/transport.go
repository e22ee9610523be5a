package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/client/h1"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/owner"
	"github.com/mcpx-dev/mcpx/internal/peercred"
)

// The transport: one HTTP/1.1 request per connection over the unix socket,
// written and read by package h1 (a keep-alive client, mcpx serve, reuses
// connections: keepalive.go). A fresh connection per request means a
// daemon restart (which closes idle connections) can never race a request
// onto a dying connection, and closing the connection is how a request is
// cancelled: the daemon cancels the request's context, and with it the
// upstream call (notifications/cancelled reaches the server).

// ErrForeignDaemon is a socket owned or served by another user: the client
// refuses it before sending anything. It wraps ErrDaemonUnavailable.
var ErrForeignDaemon error = foreignDaemon{}

// foreignDaemon is ErrForeignDaemon's type (a type, not fmt.Errorf, so that
// nothing is formatted at package init).
type foreignDaemon struct{}

func (foreignDaemon) Error() string {
	return ErrDaemonUnavailable.Error() + ": socket belongs to another user"
}
func (foreignDaemon) Unwrap() error { return ErrDaemonUnavailable }

const (
	// dialTimeout bounds one connect (a unix connect does not wait unless
	// the listen backlog is full).
	dialTimeout = 5 * time.Second
	// maxAnswer bounds a response body read whole.
	maxAnswer = 512 << 20
)

// boundKey marks a request context with its own bound (calls).
type boundKey struct{}

// withBound makes the request under ctx bounded by d instead of the
// client's RequestTimeout.
func withBound(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, boundKey{}, d)
}

// callBound is how long a call to ns may take before the client gives up:
// the server's startTimeout and callTimeout (the daemon enforces both) and
// a margin for the daemon's own work. An unknown namespace gets the
// defaults (the daemon answers unknown_namespace at once anyway).
func (c *Client) callBound(ns string) time.Duration {
	call, start := config.DefaultCallTimeout, config.DefaultStartTimeout
	t := c.brief.CallTimeouts(ns)
	if t.Call > 0 {
		call = t.Call
	}
	if t.Start > 0 {
		start = t.Start
	}
	return call + start + c.margin
}

// dial connects to the socket, activating the daemon through the manager
// when nothing listens, then waits (bounded) for the socket to accept. The
// connection is refused unless the socket file and the process serving it
// belong to this user.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	conn, err := c.dialOnce(ctx)
	if err == nil || !notListening(err) || c.manager == nil || ctx.Value(noActivate{}) != nil {
		return c.checkPeer(conn, err)
	}
	if err := c.ensure(ctx); err != nil {
		return nil, err
	}
	// The direct manager and systemd leave the socket listening when
	// Ensure returns, so the first dial connects; the bounded wait is for
	// managers that make the socket asynchronously (launchd).
	deadline := time.Now().Add(c.wait)
	for delay := 2 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
		conn, err = c.dialOnce(ctx)
		if err == nil || !notListening(err) || time.Now().After(deadline) {
			return c.checkPeer(conn, err)
		}
		dialWaits.Add(1)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (c *Client) dialOnce(ctx context.Context) (net.Conn, error) {
	if err := c.checkOwner(c.socket); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, "unix", c.socket)
}

// checkOwner refuses a socket file that belongs to someone who may not
// serve this user (peercred.ServerAllowed: the user, or root in the user's
// own private directory, as launchd's sockets are). A missing file is left
// to the dial (which activates the daemon).
func (c *Client) checkOwner(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	refused := owner.Rule{User: c.uid, What: "socket", Kind: ErrForeignDaemon}.Check(path, fi)
	if refused == nil {
		return nil
	}
	uid, _ := owner.UID(fi)
	if ok, why := peercred.ServerAllowed(path, uid, c.uid); !ok {
		return fmt.Errorf("%w%s", refused, clause(why))
	}
	return nil
}

// checkPeer refuses a connection served by a process that may not serve
// this user (see checkOwner).
func (c *Client) checkPeer(conn net.Conn, err error) (net.Conn, error) {
	if err != nil {
		return conn, err
	}
	uid, err := c.peerUID(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("socket %s: read the daemon's credentials: %w: %w", c.socket, ErrDaemonUnavailable, err)
	}
	if ok, why := peercred.ServerAllowed(c.socket, uid, c.uid); !ok {
		conn.Close()
		return nil, fmt.Errorf("socket %s is served by uid %d, not by you (uid %d)%s: %w", c.socket, uid, c.uid, clause(why), ErrForeignDaemon)
	}
	return conn, nil
}

// clause appends why to a sentence, or nothing.
func clause(why string) string {
	if why == "" {
		return ""
	}
	return "; " + why
}

// dialWaits counts waits for a socket after activation (a test seam: the
// direct manager's hand-off needs none).
var dialWaits atomic.Int64

// startFailure asks the manager why the daemon it started for this client
// did not come up (the direct manager follows its spawn), or nil.
func (c *Client) startFailure(ctx context.Context) error {
	sf, ok := c.manager.(interface {
		StartFailure(context.Context, config.DaemonKey) error
	})
	c.ensureMu.Lock()
	ensured := c.ensured
	c.ensureMu.Unlock()
	if !ok || !ensured {
		return nil
	}
	if err := sf.StartFailure(ctx, c.key); err != nil {
		return fmt.Errorf("activate daemon %s via %s: %w", c.key, c.manager.Name(), err)
	}
	return nil
}

// noActivate marks a request context: do not start a daemon for it.
type noActivate struct{}

// ensure calls Manager.Ensure once per client (again after a failure).
func (c *Client) ensure(ctx context.Context) error {
	c.ensureMu.Lock()
	defer c.ensureMu.Unlock()
	if c.ensured {
		return nil
	}
	if err := c.manager.Ensure(ctx, c.key); err != nil {
		return fmt.Errorf("activate daemon %s via %s: %w", c.key, c.manager.Name(), err)
	}
	c.ensured = true
	return nil
}

func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// errDial marks a failed connect: it is never retried by do (dial already
// activated and waited).
type errDial struct{ err error }

func (e *errDial) Error() string { return e.err.Error() }
func (e *errDial) Unwrap() error { return e.err }

// retryable reports whether a request that failed with err may be sent
// again on a fresh connection. It may when the daemon provably did not read
// it: it was never fully written (the connection closed first), the
// connection was reset with our request unread (a listener closed under a
// queued connection), or our write was refused. A GET may also be repeated
// after the connection ended without an answer (the daemon went away before
// answering). Anything else may have been read and acted on before the
// connection closed (a daemon killed in the middle of a call, or closing
// calls that overran its shutdown grace), and running a tool twice is worse
// than reporting the failure.
func retryable(method string, written bool, err error) bool {
	var de *errDial
	if errors.As(err, &de) {
		return false
	}
	if !written || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	return method == "GET" && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
}

// do sends one request and decodes a 2xx JSON answer into out. The
// request is bounded by the client's RequestTimeout, or by the bound
// withBound put on ctx; when ctx ends (Ctrl-C) the connection is closed,
// which cancels the request in the daemon.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.boundOf(ctx))
	defer cancel()
	cn, resp, err := c.send(parent, ctx, method, path, target, body)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { cn.Close() })
	defer c.release(cn, resp, stop)
	data, err := readAnswer(resp)
	if err != nil {
		return fmt.Errorf("%s %s on %s: read answer: %w: %w", method, path, c.socket, ErrDaemonUnavailable, err)
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("%s %s: answer larger than %d bytes", method, path, maxAnswer)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return apiError(method, path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	if d, ok := out.(answerDecoder); ok {
		err = d.decodeAnswer(resp.Header["content-type"], data)
	} else {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// answerDecoder is an answer (out of do) that decodes itself: one that is
// not a JSON document, or one read without encoding/json's reflection.
type answerDecoder interface {
	decodeAnswer(contentType string, data []byte) error
}

// boundOf is the bound of a request under ctx: the one withBound put on
// it, else the client's RequestTimeout.
func (c *Client) boundOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(boundKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return c.timeout
}

// apiError is the *APIError of a non-2xx answer with body data.
func apiError(method, path string, status int, data []byte) *APIError {
	e := &APIError{Status: status}
	if json.Unmarshal(data, &e.Body) != nil || e.Body.Error == "" {
		e.Body.Error = fmt.Sprintf("%s %s: daemon answered %d: %s", method, path, status, trimSpace(data))
	}
	return e
}

// send sends one request and returns the answer with its body unread
// (the caller closes conn). A request that failed in a way retryable
// allows is sent again: a GET up to three more times, anything else (a
// call) once. ctx bounds the request; parent is the caller's own context
// (its end is an interrupt, not a timeout). The daemon's build is checked
// against this client's (upgrade.go).
func (c *Client) send(parent, ctx context.Context, method, path, target string, body any) (*conn, *h1.Response, error) {
	if err := c.prepare(); err != nil {
		return nil, nil, err
	}
	var payload []byte
	if m, ok := body.(json.Marshaler); ok {
		// Without encoding/json's reflection, which costs a process that
		// sends one request more than the encoding (api.CallRequest).
		var err error
		if payload, err = m.MarshalJSON(); err != nil {
			return nil, nil, fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
	} else if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, nil, fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
	}
	attempts := 2
	if method == "GET" {
		attempts = 4
	}
	for i := 1; ; i++ {
		cn, resp, written, err := c.open(ctx, method, target, payload)
		if err == nil {
			c.checkBuild(parent, resp.Header[strings.ToLower(api.HeaderBinary)])
			return cn, resp, nil
		}
		if parent.Err() != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", method, path, parent.Err())
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s %s on %s: %w: no answer within %s", method, path, c.socket, ErrDaemonUnavailable, c.boundOf(ctx))
		}
		if errors.Is(err, ErrForeignDaemon) {
			return nil, nil, err
		}
		if serr := c.startFailure(ctx); serr != nil {
			return nil, nil, serr
		}
		if i >= attempts || !retryable(method, written, err) {
			return nil, nil, fmt.Errorf("%s %s on %s: %w: %w", method, path, c.socket, ErrDaemonUnavailable, err)
		}
		time.Sleep(time.Duration(i) * 20 * time.Millisecond)
	}
}

// roundTrip sends one request on a fresh connection and reads the whole
// answer. written reports whether the request left in full.
func (c *Client) roundTrip(ctx context.Context, method, target string, payload []byte) (status int, data []byte, written bool, err error) {
	status, data, _, written, err = c.exchange(ctx, method, target, payload)
	return status, data, written, err
}

// exchange is roundTrip that also returns the daemon's build
// (api.HeaderBinary).
func (c *Client) exchange(ctx context.Context, method, target string, payload []byte) (status int, data []byte, binary string, written bool, err error) {
	cn, resp, written, err := c.open(ctx, method, target, payload)
	if err != nil {
		return 0, nil, "", written, err
	}
	stop := context.AfterFunc(ctx, func() { cn.Close() })
	defer c.release(cn, resp, stop)
	data, err = readAnswer(resp)
	if err != nil {
		return 0, nil, "", true, fmt.Errorf("read answer: %w", err)
	}
	if len(data) > maxAnswer {
		return 0, nil, "", true, fmt.Errorf("answer larger than %d bytes", maxAnswer)
	}
	return resp.Status, data, resp.Header[strings.ToLower(api.HeaderBinary)], true, nil
}

// open sends one request and reads the answer's head; the caller reads
// the body and releases the connection. The request goes on a fresh
// connection, or, for a keep-alive client, on an idle one (a kept
// connection the daemon closed meanwhile is dropped and the next one
// tried, at once: keepalive.go). Every request carries the stamp of the
// config sources the client found, so a daemon holding another config
// reloads before answering. written reports whether the request left in
// full.
func (c *Client) open(ctx context.Context, method, target string, payload []byte) (cn *conn, resp *h1.Response, written bool, err error) {
	req := h1.Request{Method: method, Target: target, KeepAlive: c.pool != nil}
	if c.brief != nil {
		req.Header = [][2]string{{api.HeaderConfigStamp, c.brief.Stamp}}
	}
	if c.envDigest != "" {
		req.Header = append(req.Header, [2]string{api.HeaderEnvDigest, c.envDigest})
	}
	if payload != nil {
		req.Body, req.ContentType = payload, "application/json"
	}
	for {
		if c.pool != nil {
			cn = c.pool.get(time.Now())
		}
		if cn == nil {
			nc, err := c.dial(ctx)
			if err != nil {
				if errors.Is(err, ErrForeignDaemon) {
					return nil, nil, false, err
				}
				return nil, nil, false, &errDial{err}
			}
			cn = &conn{Conn: nc, br: bufio.NewReaderSize(nc, 16<<10)}
		}
		kept := cn
		resp, written, err = cn.exchange(ctx, req, func(sent time.Time) error {
			return c.awaitAnswer(ctx, kept, kept.br, target, sent)
		})
		if err != nil && cn.reused && ctx.Err() == nil && retryable(method, written, err) {
			// A kept connection the daemon closed (idle, restarting)
			// before it read the request.
			cn.Close()
			cn = nil
			continue
		}
		return cn, resp, written, err
	}
}

// exchange writes req on cn and reads the answer's head, waiting for its
// first byte with await (Client.awaitAnswer, given when the request left)
// when set. On an error cn is closed.
func (cn *conn) exchange(ctx context.Context, req h1.Request, await func(sent time.Time) error) (resp *h1.Response, written bool, err error) {
	stop := context.AfterFunc(ctx, func() { cn.Close() })
	defer stop()
	if werr := h1.WriteRequest(cn, req); werr != nil {
		// The daemon may have refused the request before reading all of
		// it (413 for a body over its limit) and closed: its answer is
		// still there to read, and it says more than a broken pipe.
		cn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if resp, err = h1.ReadResponse(cn.br); err == nil {
			cn.SetReadDeadline(time.Time{})
			return resp, false, nil
		}
		cn.Close()
		return nil, false, werr
	}
	if await != nil {
		if err := await(time.Now()); err != nil {
			cn.Close()
			return nil, true, err
		}
	}
	resp, err = h1.ReadResponse(cn.br)
	if err != nil {
		cn.Close()
		return nil, true, err
	}
	return resp, true, nil
}

func trimSpace(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// DialWaits is how many times this process waited for a socket to appear
// after activating a daemon: a diagnostic and a test seam (the direct
// manager's hand-off and systemd's socket units need no wait).
func DialWaits() int64 { return dialWaits.Load() }

// readAnswer reads resp's body, up to maxAnswer+1 bytes (so a caller sees
// one too many). A body of known length is read into a buffer of that size
// at once: a 10,000-tool listing is then not copied through a growing one.
func readAnswer(resp *h1.Response) ([]byte, error) {
	n, err := strconv.Atoi(resp.Header["content-length"])
	if err != nil || n < 0 || n > maxAnswer {
		return io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	}
	buf := make([]byte, n, n+1)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
