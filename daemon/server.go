package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/peercred"
	"github.com/mcpx-dev/mcpx/internal/stack"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/upstream"
)

// route is one entry of the API: a path under /v1, its method and its
// handler. A handler returns an error to answer with api.Error.
type route struct {
	path   string
	method string
	serve  func(d *daemon, w http.ResponseWriter, r *http.Request) error
}

// routes is the whole API, sorted by path.
var routes = []route{
	{api.PathAuth, http.MethodGet, (*daemon).serveAuth},
	{api.PathCall, http.MethodPost, (*daemon).serveCall},
	{api.PathComplete, http.MethodPost, (*daemon).serveComplete},
	{api.PathElicit, http.MethodPost, (*daemon).serveElicit},
	{api.PathHealth, http.MethodGet, (*daemon).serveHealth},
	{api.PathLogin, http.MethodPost, (*daemon).serveLogin},
	{api.PathLoginWait, http.MethodPost, (*daemon).serveLoginWait},
	{api.PathLogout, http.MethodPost, (*daemon).serveLogout},
	{api.PathNamespaces, http.MethodGet, (*daemon).serveNamespaces},
	{api.PathPrompt, http.MethodPost, (*daemon).servePrompt},
	{api.PathPrompts, http.MethodGet, (*daemon).servePrompts},
	{api.PathRead, http.MethodPost, (*daemon).serveRead},
	{api.PathRefresh, http.MethodPost, (*daemon).serveRefresh},
	{api.PathResolve, http.MethodGet, (*daemon).serveResolve},
	{api.PathResources, http.MethodGet, (*daemon).serveResources},
	{api.PathRestart, http.MethodPost, (*daemon).serveRestart},
	{api.PathSchema, http.MethodGet, (*daemon).serveSchema},
	{api.PathSearch, http.MethodGet, (*daemon).serveSearch},
	{api.PathShutdown, http.MethodPost, (*daemon).serveShutdown},
	{api.PathStatus, http.MethodGet, (*daemon).serveStatus},
	{api.PathSubscribe, http.MethodPost, (*daemon).serveSubscribe},
	{api.PathTask, http.MethodGet, (*daemon).serveTask},
	{api.PathTaskCancel, http.MethodPost, (*daemon).serveTaskCancel},
	{api.PathTaskResult, http.MethodPost, (*daemon).serveTaskResult},
	{api.PathTasks, http.MethodGet, (*daemon).serveTasks},
	{api.PathTools, http.MethodGet, (*daemon).serveTools},
}

// handler checks the peer, counts the request as activity for the idle
// timer and finds the route.
func (d *daemon) handler() http.Handler {
	table := make(map[string]route, len(routes))
	for _, rt := range routes {
		table[rt.path] = rt
	}
	debug := d.getenv != nil && debugEnabled(d.getenv)
	self := os.Getuid() // (a system call each time it is asked)
	// Every answer's identity headers, made once: set by their canonical
	// keys, not Header.Set's check and new slice per request. net/http
	// copies a handler's header before it writes it; nothing appends to
	// these in place (len == cap).
	ver := []string{version.String()}
	var bin []string
	if d.binary != "" {
		bin = []string{d.binary}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A connection's requests run on its goroutine, deep: its
		// stack is grown before the first (later ones would only zero
		// the frame again).
		if c, ok := r.Context().Value(grownKey{}).(*bool); ok && !*c {
			stack.Grow()
			*c = true
		}
		// From here the request is answered, even by a daemon stopping.
		d.unanswered.reached(r.Context())
		h := w.Header()
		h[api.HeaderVersion] = ver
		if bin != nil {
			h[api.HeaderBinary] = bin
		}
		// A refused peer is not activity: it must not keep the daemon
		// from its idle exit.
		if err := checkPeer(r.Context(), self); err != nil {
			d.log.Printf("refused %s %s: %v", r.Method, r.URL.Path, err)
			d.writeError(w, apiErr(http.StatusForbidden, api.CodeForbidden, "%v", err))
			return
		}
		d.inflight.Add(1)
		select { // trimLoop: a burst has started or goes on
		case d.trimPoke <- struct{}{}:
		default:
		}
		d.touch()
		d.keepInfo(d.lastActive.Load())
		defer func() { d.touch(); d.inflight.Add(-1) }()
		if debug && strings.HasPrefix(r.URL.Path, debugPrefix) {
			serveDebug(w, r)
			return
		}
		rt, ok := table[r.URL.Path]
		if !ok {
			d.writeError(w, apiErr(http.StatusNotFound, api.CodeNotFound, "no route %s", r.URL.Path))
			return
		}
		if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", rt.method)
			d.writeError(w, apiErr(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s wants %s, not %s", rt.path, rt.method, r.Method))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		d.freshen(r.Context(), r.Header.Get(api.HeaderConfigStamp))
		if digest := r.Header.Get(api.HeaderEnvDigest); digest != "" {
			r = r.WithContext(withEnvDigest(r.Context(), digest))
		}
		if err := rt.serve(d, w, r); err != nil {
			d.writeError(w, err)
		}
	})
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) error {
	w.Header()["Content-Type"] = contentJSON
	return newEncoder(w).Encode(v)
}

// contentJSON is the Content-Type of a JSON answer, one slice for all
// (see handler: net/http copies it, nothing changes it in place).
var contentJSON = []string{"application/json"}[:1:1]

// newEncoder writes JSON without HTML escaping: results pass through as the
// server sent them ("<" stays "<", not "\u003c").
func newEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// writeRawJSON answers 200 with parts, which together are one JSON document
// encoded beforehand (no re-encoding of what the daemon already holds as
// JSON).
func writeRawJSON(w http.ResponseWriter, parts ...[]byte) error {
	w.Header()["Content-Type"] = contentJSON
	return writeRaw(w, parts...)
}

// writeRaw answers 200 with parts, under the Content-Type already set.
func writeRaw(w http.ResponseWriter, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// decodeBody reads a JSON request body into v; an empty body leaves v as
// is.
func decodeBody(r *http.Request, v any) error {
	data, err := readBody(r.Body, r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apiErr(http.StatusRequestEntityTooLarge, api.CodeRequestTooLarge,
				"request body over the daemon's request size limit of %d bytes (%d MiB)", tooBig.Limit, tooBig.Limit>>20)
		}
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "read request body: %v", err)
	}
	if len(data) == 0 {
		return nil
	}
	if req, ok := v.(*api.CallRequest); ok {
		// Every call: read without encoding/json's reflection (the
		// same result, api/scananswers.go).
		got, err := api.DecodeCallRequest(data)
		if err != nil {
			return apiErr(http.StatusBadRequest, api.CodeBadRequest, "decode request body: %v", err)
		}
		*req = *got
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "decode request body: %v", err)
	}
	return nil
}

// readBody is io.ReadAll into one buffer of the body's declared length
// (plus the byte that meets EOF), where io.ReadAll starts at 512 bytes
// and grows by copying: a call with 1 MiB of arguments was copied some 30
// times over. A length that is unknown, or over maxBody (the reader
// refuses it), is left to io.ReadAll.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 || length > maxBody {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, length+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // longer than declared: grow as io.ReadAll does
			b = append(b, 0)[:len(b)]
		}
	}
}

// httpError is an error with its HTTP status and wire body.
type httpError struct {
	status int
	body   api.Error
}

func (e *httpError) Error() string { return e.body.Error }

func apiErr(status int, code, format string, args ...any) *httpError {
	return &httpError{status: status, body: api.Error{Error: fmt.Sprintf(format, args...), Code: code}}
}

// writeError answers with err as api.Error; errors that are not
// *httpError are mapped by kind.
func (d *daemon) writeError(w http.ResponseWriter, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		he = mapError(err)
	}
	he.body.Error = d.redact(he.body.Error)
	he.body.Stderr = d.redact(he.body.Stderr)
	if he.status >= 500 {
		d.log.Printf("%s: %s", he.body.Code, he.body.Error)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(he.status)
	_ = json.NewEncoder(w).Encode(he.body)
}

// mapError turns errors from the registry and upstream into statuses:
// login required 401, insufficient scope 403, start failure 502, cooldown 503, timeout 504, JSON-RPC error 502
// server_error, anything else 502 transport_error.
func mapError(err error) *httpError {
	var (
		he       *httpError
		cool     *upstream.CooldownError
		start    *upstream.StartError
		timeout  *upstream.TimeoutError
		rpc      *upstream.RPCError
		exit     *upstream.ExitError
		unset    *config.UnsetVarError
		parseErr *config.ParseError
		login    *upstream.LoginRequiredError
		inquiry  *upstream.InquiryError
		scope    *upstream.InsufficientScopeError
	)
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &login):
		e := apiErr(http.StatusUnauthorized, api.CodeLoginRequired, "%v", login)
		e.body.Namespace = login.Server
		return e
	case errors.As(err, &scope):
		e := apiErr(http.StatusForbidden, api.CodeInsufficientScope, "%v", scope)
		e.body.Namespace = scope.Server
		if !scope.Futile {
			e.body.Scope = scope.Scope
		}
		return e
	case errors.As(err, &cool):
		// The stderr tail travels once, in Stderr, not inside the message.
		e := apiErr(http.StatusServiceUnavailable, api.CodeCooldown, "%s", summary(err, cool))
		until := cool.Until
		e.body.RetryAfter = &until
		e.body.Namespace = cool.Server
		if cool.Last != nil {
			e.body.Stderr = cool.Last.Stderr
		}
		return e
	case errors.As(err, &start):
		e := apiErr(http.StatusBadGateway, api.CodeStartFailed, "%s", summary(err, start))
		e.body.Stderr = start.Stderr
		e.body.Namespace = start.Server
		return e
	case errors.As(err, &timeout):
		e := apiErr(http.StatusGatewayTimeout, api.CodeTimeout, "%v", err)
		e.body.Namespace, e.body.Tool = timeout.Server, timeout.Tool
		return e
	case errors.As(err, &inquiry):
		e := apiErr(http.StatusBadGateway, api.CodeServerError, "%v", inquiry)
		e.body.Namespace = inquiry.Server
		e.body.RPC = missingCapability(inquiry)
		return e
	case errors.As(err, &rpc):
		e := apiErr(http.StatusBadGateway, api.CodeServerError, "%s", rpc.Message)
		e.body.RPC = &api.RPCError{Code: rpc.Code, Message: rpc.Message, Data: rpc.Data}
		return e
	case errors.As(err, &exit):
		e := apiErr(http.StatusBadGateway, api.CodeTransport, "%s", summary(err, exit))
		e.body.Stderr = exit.Stderr
		e.body.Namespace = exit.Server
		return e
	case errors.As(err, &unset):
		e := apiErr(http.StatusUnprocessableEntity, api.CodeUnsetVariable, "%v", err)
		e.body.Namespace = unset.Server
		return e
	case errors.As(err, &parseErr):
		return apiErr(http.StatusUnprocessableEntity, api.CodeConfig, "%v", err)
	case errors.Is(err, upstream.ErrClosed):
		return apiErr(http.StatusServiceUnavailable, api.CodeShuttingDown, "%v", err)
	default:
		return apiErr(http.StatusBadGateway, api.CodeTransport, "%v", err)
	}
}

// peerKey stashes a connection's peer credentials in its context.
type peerKey struct{}

// peer is who is on the other end of a connection.
type peer struct {
	uid int
	err error
}

// connContext reads the peer credentials once per connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	uid, err := peercred.UID(c)
	ctx = context.WithValue(ctx, grownKey{}, new(bool))
	ctx = context.WithValue(ctx, connKey{}, c)
	return context.WithValue(ctx, peerKey{}, peer{uid: uid, err: err})
}

// grownKey holds whether a connection's goroutine has grown its stack
// (*bool; only that goroutine reads and writes it).
type grownKey struct{}

// errPeer is a connection refused for its credentials.
var errPeer = errors.New("peer refused")

// checkPeer admits a request only when its connection's peer is uid self.
func checkPeer(ctx context.Context, self int) error {
	p, ok := ctx.Value(peerKey{}).(peer)
	if !ok {
		return fmt.Errorf("%w: no peer credentials", errPeer)
	}
	return p.check(self)
}

func (p peer) check(self int) error {
	if p.err != nil {
		return fmt.Errorf("%w: read peer credentials: %v", errPeer, p.err)
	}
	if p.uid != self {
		return fmt.Errorf("%w: uid %d is not the daemon's uid %d", errPeer, p.uid, self)
	}
	return nil
}

// since is time.Since, rounded for logs.
func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// summary is err's message with the part inner makes of it replaced by
// inner's summary (the same words without the stderr tail): errors that
// wrap a start or exit error keep their own words, and the tail is said
// once, in api.Error.Stderr.
func summary(err error, inner interface {
	error
	Summary() string
}) string {
	full, with := err.Error(), inner.Error()
	if i := strings.LastIndex(full, with); i >= 0 {
		return full[:i] + inner.Summary() + full[i+len(with):]
	}
	return inner.Summary()
}

// missingCapability is the MissingRequiredClientCapabilityError (-32021)
// of a call whose server asked for what the caller did not offer (nil for
// any other failure to answer): a relay's host that did not declare the
// capability gets it, as the spec has a server answer a request that needs
// a capability its client lacks.
func missingCapability(e *upstream.InquiryError) *api.RPCError {
	if !errors.Is(e, upstream.ErrNotOffered) {
		return nil
	}
	var capability string
	switch e.Method {
	case api.MethodSample:
		capability = "sampling"
	case api.MethodRoots:
		capability = "roots"
	case "elicitation/create":
		capability = "elicitation"
	default:
		return nil
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}})
	return &api.RPCError{Code: api.RPCMissingCapability,
		Message: fmt.Sprintf("server %s asked for %s, which the client did not declare", e.Server, capability), Data: data}
}
