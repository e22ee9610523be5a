package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// source is one server's token state: the current record, and the refresh
// in flight if any. Every connection to the server shares it.
type source struct {
	m    *Manager
	hash config.ServerHash

	mu  sync.Mutex
	srv Server
	rec *Record
	// failed is why the last refresh ended the login (cleared by a new
	// login); requests get it instead of a bare 401.
	failed *LoginRequiredError
	flight *refreshFlight
	// challenge is the server's last Bearer challenge of a 401: a login
	// whose own probe meets none (a server that lets initialize through
	// without a token) takes its scope and metadata URL from it.
	challenge challenge
	// stepUp is what the next login asks for after a 403
	// insufficient_scope: the scopes held and those challenged ("" when
	// no step-up is pending). Kept in memory: a daemon that forgot it
	// learns it again from the next refusal.
	stepUp string
	// denied is what the last login asked for and was not granted: a
	// challenge for it is not worth another login.
	denied string
}

// refreshFlight is one refresh; waiters read err once done is closed.
type refreshFlight struct {
	done chan struct{}
	err  error
}

func (s *source) setServer(srv Server) {
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
}

// set makes rec current (a new login that asked for asked): what was
// pending for the login is done.
func (s *source) set(rec *Record, asked string) {
	s.mu.Lock()
	s.rec, s.failed, s.stepUp, s.challenge = rec, nil, "", challenge{}
	s.denied = scopeMinus(asked, rec.Scope)
	s.mu.Unlock()
}

// loginState is what a new login builds on: the current login (nil when
// none), the step-up scope pending, and the last 401 challenge.
func (s *source) loginState() (*Record, string, challenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.loadLocked()
	return s.rec, s.stepUp, s.challenge, err
}

// noteChallenge remembers a 401's Bearer challenge for the next login.
func (s *source) noteChallenge(ch challenge) {
	if !ch.bearer {
		return
	}
	s.mu.Lock()
	s.challenge = ch
	s.mu.Unlock()
}

// insufficientScope remembers what a 403 insufficient_scope challenged, so
// the next login asks for it with the scopes held (and any step-up still
// pending), and returns the error for the request. A challenge the login
// already satisfies changes nothing: another login would not help.
func (s *source) insufficientScope(ch challenge) *InsufficientScopeError {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := ""
	if s.rec != nil {
		held = s.rec.Scope
	}
	e := &InsufficientScopeError{Server: s.srv.Name, Challenged: ch.scope, Scope: held}
	switch {
	case ch.scope == "":
		e.Futile, e.Why = true, ScopeUnnamed
	case scopeCovers(held, ch.scope):
		e.Futile, e.Why = true, ScopeHeld
	case scopeCovers(s.denied, scopeMinus(ch.scope, held)):
		e.Futile, e.Why = true, ScopeDenied
	default:
		e.Scope = scopeUnion(held, s.stepUp, ch.scope)
		s.stepUp = e.Scope
	}
	return e
}

// migrated is called when the server refused the login's token and no
// refresh helped (le): if the server's protected resource metadata no
// longer names the authorization server of the login, the server moved to
// another one (SEP-2352). The login's tokens and client registration
// belong to the old one and are forgotten, and the error says so; the next
// login registers with the new one. Otherwise le is returned.
func (s *source) migrated(ctx context.Context, ch challenge, le *LoginRequiredError) error {
	s.mu.Lock()
	rec, srv := s.rec, s.srv
	s.mu.Unlock()
	if rec == nil {
		return le
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	servers, err := s.m.authorizationServers(ctx, srv, ch)
	if err != nil || len(servers) == 0 || slices.ContainsFunc(servers, func(as string) bool { return sameIssuer(as, rec.Issuer) }) {
		return le
	}
	moved := &LoginRequiredError{Server: srv.Name, Reason: fmt.Sprintf("its authorization server changed from %s to %s, so its login was forgotten", rec.Issuer, servers[0])}
	s.mu.Lock()
	if s.rec == rec {
		s.rec, s.failed = nil, moved
	}
	s.mu.Unlock()
	// Another daemon may have logged in with the new server meanwhile:
	// only the old server's record is deleted.
	if cur, err := s.m.store.Load(s.hash); err == nil && cur != nil && cur.Issuer == rec.Issuer {
		if err := s.m.store.Delete(s.hash); err != nil {
			s.m.logf("auth: %s: forget tokens: %v", srv.Name, err)
		}
	}
	s.m.logf("auth: %s: authorization server changed from %s to %s; its login was forgotten", srv.Name, rec.Issuer, servers[0])
	return moved
}

// loadLocked makes s.rec current. A record in memory is kept (this
// process refreshes it; another process's refresh is picked up when this
// one refreshes); absence is never cached, so a login made through another
// daemon sharing the store is seen at the next request. Called with s.mu
// held.
func (s *source) loadLocked() error {
	if s.rec != nil {
		return nil
	}
	rec, err := s.m.store.Load(s.hash)
	if err != nil {
		return err
	}
	if rec != nil {
		s.failed = nil
	}
	s.rec = rec
	return nil
}

// expiring reports whether r's access token should be refreshed now: it
// expires within a fifth of its lifetime, at most 30 s.
func (s *source) expiring(r *Record) bool {
	if r.Expiry.IsZero() {
		return false
	}
	skew := min(30*time.Second, r.Expiry.Sub(r.ObtainedAt)/5)
	return !s.m.now().Before(r.Expiry.Add(-skew))
}

// token returns the access token to send ("" when there is no login).
// It refreshes first when the token is about to expire, or when stale is
// the token a server just refused; one refresh runs at a time and
// callers arriving meanwhile wait for its outcome.
func (s *source) token(ctx context.Context, stale string) (string, error) {
	for {
		s.mu.Lock()
		if err := s.loadLocked(); err != nil {
			s.mu.Unlock()
			return "", err
		}
		rec := s.rec
		if rec == nil {
			failed := s.failed
			s.mu.Unlock()
			if failed != nil {
				return "", failed
			}
			return "", nil
		}
		refused := stale != "" && rec.AccessToken == stale
		if !refused && !s.expiring(rec) {
			s.mu.Unlock()
			return rec.AccessToken, nil
		}
		if rec.RefreshToken == "" {
			name := s.srv.Name
			s.mu.Unlock()
			if refused {
				return "", &LoginRequiredError{Server: name, Reason: "the access token was refused and there is no refresh token"}
			}
			return rec.AccessToken, nil // let the server judge it
		}
		if f := s.flight; f != nil {
			s.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if f.err != nil {
				return "", f.err
			}
			stale = "" // the refreshed token is the one to try
			continue
		}
		f := &refreshFlight{done: make(chan struct{})}
		s.flight = f
		srv := s.srv
		s.mu.Unlock()

		// Detached from the caller: a rotated refresh token must not be
		// lost because the call that started the refresh gave up.
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		n, err := s.doRefresh(rctx, rec, srv)
		cancel()

		s.mu.Lock()
		switch {
		case err == nil:
			s.rec = n
		case errors.Is(err, errLoggedOut):
			le := &LoginRequiredError{Server: srv.Name, Reason: "logged out"}
			s.rec, s.failed = nil, le
			err = le
		case isLoginEnding(err):
			// The grant is gone: forget the tokens, keep the reason.
			le := &LoginRequiredError{Server: srv.Name, Reason: "refreshing the token failed: " + err.Error()}
			s.rec, s.failed = nil, le
			if derr := s.m.store.Delete(s.hash); derr != nil {
				s.m.logf("auth: %s: forget tokens: %v", srv.Name, derr)
			}
			err = le
		default:
			err = fmt.Errorf("refresh the token of %s: %w", srv.Name, err)
		}
		f.err = err
		s.flight = nil
		close(f.done)
		s.mu.Unlock()
		if err != nil {
			s.m.logf("auth: %v", err)
			return "", err
		}
		s.m.logf("auth: refreshed the token of %s (expires %s)", srv.Name, n.Expiry.Format(time.RFC3339))
		return n.AccessToken, nil
	}
}

// doRefresh refreshes rec under the store's lock, so daemons sharing the
// store refresh one at a time. What the store holds wins over rec: another
// process may have refreshed already (its token is used when still good,
// its newer refresh token otherwise), logged in anew, or logged out (nil,
// errLoggedOut).
func (s *source) doRefresh(ctx context.Context, rec *Record, srv Server) (*Record, error) {
	if l, ok := s.m.store.(Locker); ok {
		unlock, err := l.Lock(ctx, s.hash)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	cur, err := s.m.store.Load(s.hash)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, errLoggedOut
	}
	if cur.AccessToken != rec.AccessToken {
		if !s.expiring(cur) {
			return cur, nil
		}
		rec = cur
	}
	n, err := s.m.refresh(ctx, rec, srv.Auth)
	if err != nil {
		return nil, err
	}
	if err := s.m.store.Save(n); err != nil {
		// The new token works in memory; the next daemon will need a login.
		s.m.logf("auth: %s: save refreshed tokens: %v", srv.Name, err)
	}
	return n, nil
}

// errLoggedOut is a refresh that found the tokens gone from the store.
var errLoggedOut = errors.New("logged out")

// isLoginEnding reports whether a refresh failure means the grant is gone
// (a new login is needed) rather than a passing failure.
func isLoginEnding(err error) bool {
	var oe *OAuthError
	if !errors.As(err, &oe) {
		return false
	}
	switch oe.Code {
	case "invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope", "invalid_target":
		return true
	}
	return oe.Status == http.StatusUnauthorized
}

// RoundTripper returns the transport for connections to s: it adds s's
// access token, refreshes it before it expires and when the server refuses
// it, and answers a request the server refuses for want of a login with a
// *LoginRequiredError. A server whose headers carry their own
// Authorization is left alone.
func (m *Manager) RoundTripper(s Server, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return base
		}
	}
	return &roundTripper{src: m.source(s), base: base, name: s.Name}
}

type roundTripper struct {
	src  *source
	base http.RoundTripper
	name string
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.src.token(req.Context(), "")
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(withToken(req, tok))
	if err != nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
	case http.StatusForbidden:
		return t.forbidden(resp)
	default:
		return resp, nil
	}
	ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
	if !ch.bearer && len(resp.Header.Values("WWW-Authenticate")) > 0 {
		return resp, nil // another scheme: not ours to answer
	}
	discard(resp)
	t.src.noteChallenge(ch)
	if tok == "" {
		return nil, &LoginRequiredError{Server: t.name, Reason: "no login yet"}
	}
	ctx := req.Context()
	if req.Body != nil && req.GetBody == nil {
		return nil, t.src.migrated(ctx, ch, &LoginRequiredError{Server: t.name, Reason: "the server refused the access token"})
	}
	// Refused: refresh (or take the token another request just got) and
	// try once more.
	fresh, err := t.src.token(ctx, tok)
	var le *LoginRequiredError
	switch {
	case errors.As(err, &le):
		return nil, t.src.migrated(ctx, ch, le)
	case err != nil:
		return nil, err
	case fresh == "" || fresh == tok:
		return nil, t.src.migrated(ctx, ch, &LoginRequiredError{Server: t.name, Reason: "the server refused the access token"})
	}
	retry := req.Clone(ctx)
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	resp, err = t.base.RoundTrip(withToken(retry, fresh))
	if err != nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
	case http.StatusForbidden:
		return t.forbidden(resp)
	default:
		return resp, nil
	}
	ch = parseChallenge(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	return nil, t.src.migrated(ctx, ch, &LoginRequiredError{Server: t.name, Reason: "the server refused a freshly refreshed access token"})
}

// forbidden answers a 403: one with a Bearer challenge of
// insufficient_scope becomes an *InsufficientScopeError (the scope is
// remembered for the next login); any other goes to the caller as is.
func (t *roundTripper) forbidden(resp *http.Response) (*http.Response, error) {
	ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
	if !ch.bearer || ch.err != "insufficient_scope" {
		return resp, nil
	}
	discard(resp)
	return nil, t.src.insufficientScope(ch)
}

// withToken is req with the bearer token set (req itself when tok is "").
func withToken(req *http.Request, tok string) *http.Request {
	if tok == "" {
		return req
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
