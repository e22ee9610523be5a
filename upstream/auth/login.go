package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Pending is a login waiting for the user to approve it in a browser.
type Pending struct {
	// ID names the login for WaitLogin.
	ID string
	// URL is what the user opens: the authorization URL, or for the device
	// grant the verification URI (complete with the code when offered).
	URL string
	// UserCode is the code the user enters (device grant only).
	UserCode string
	// ExpiresAt is when the login gives up waiting.
	ExpiresAt time.Time
}

type pending struct {
	Pending
	done   chan struct{}
	info   *Info
	err    error
	stop   func() // ends the listener or the polling; idempotent
	finish func(*Info, error)
}

// loginTimeout bounds how long a login waits for the user.
const loginTimeout = 10 * time.Minute

// BeginLogin discovers s's authorization server, registers mcpx with it
// and starts a login: for the authorization code grant a loopback listener
// on an ephemeral port receives the redirect; for the device grant (device)
// the token endpoint is polled. The user opens Pending.URL; WaitLogin
// returns once the tokens are stored.
func (m *Manager) BeginLogin(ctx context.Context, s Server, device bool) (*Pending, error) {
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil, fmt.Errorf("server %s sends its own Authorization header (its headers in the config); remove it to log in with OAuth", s.Name)
		}
	}
	d, err := m.discover(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("discover how to log in to %s: %w", s.Name, err)
	}
	if d.legacy {
		m.logf("auth: %s publishes no protected resource metadata: logging in as the 2025-03-26 spec says, with authorization server %s", s.Name, d.as.Issuer)
	}
	if device && d.as.DeviceAuthorizationEndpoint == "" {
		return nil, fmt.Errorf("authorization server %s does not offer the device authorization grant; log in without --device (add --no-browser to get the URL to open elsewhere)", d.as.Issuer)
	}
	var ln net.Listener
	redirect := "http://127.0.0.1/callback"
	if !device {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("listen for the login redirect: %w", err)
		}
		redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	}
	c, err := m.register(ctx, s, d, redirect, device)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	rec := &Record{
		ServerHash: s.Hash, Server: s.Name, Resource: d.resource, Issuer: d.as.Issuer,
		TokenEndpoint: d.as.TokenEndpoint, RevocationEndpoint: d.as.RevocationEndpoint,
		ClientID: c.id, AuthMethod: c.method,
	}
	if s.Auth == nil || s.Auth.ClientID != c.id {
		rec.ClientSecret = c.secret // issued by registration: needed to refresh
	}
	scope := m.loginScope(s, d)
	rec.Scope = scope

	p := &pending{done: make(chan struct{})}
	p.ID = randomToken()
	p.ExpiresAt = m.now().Add(loginTimeout)
	var once bool
	p.finish = func(info *Info, err error) {
		m.mu.Lock()
		if once {
			m.mu.Unlock()
			return
		}
		once = true
		p.info, p.err = info, err
		m.mu.Unlock()
		close(p.done)
	}
	// done stores rec (now holding tokens) and makes it current.
	done := func(rec *Record) (*Info, error) {
		if err := m.store.Save(rec); err != nil {
			return nil, err
		}
		m.source(s).set(rec, scope)
		m.logf("auth: logged in to %s (issuer %s, scope %q)", s.Name, rec.Issuer, rec.Scope)
		return infoOf(rec), nil
	}

	if device {
		if err := m.beginDevice(ctx, p, rec, c, d.as.DeviceAuthorizationEndpoint, done); err != nil {
			return nil, err
		}
	} else {
		verifier, state := randomToken(), randomToken()
		q := url.Values{
			"response_type":         {"code"},
			"client_id":             {c.id},
			"redirect_uri":          {redirect},
			"code_challenge":        {challengeS256(verifier)},
			"code_challenge_method": {"S256"},
			"state":                 {state},
			"resource":              {rec.Resource},
		}
		if scope != "" {
			q.Set("scope", scope)
		}
		au, err := url.Parse(d.as.AuthorizationEndpoint)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("authorization endpoint: %w", err)
		}
		for k, v := range au.Query() { // keep what the endpoint URL carries
			if q.Get(k) == "" {
				q[k] = v
			}
		}
		au.RawQuery = q.Encode()
		p.URL = au.String()
		m.serveRedirect(p, ln, rec, c, d.as.IssParameterSupported, state, verifier, redirect, done)
	}
	timer := time.AfterFunc(loginTimeout, func() {
		p.finish(nil, fmt.Errorf("login to %s: nobody approved it within %s", s.Name, loginTimeout))
		p.stop()
		m.mu.Lock()
		delete(m.logins, p.ID) // nobody waited for it
		m.mu.Unlock()
	})
	go func() { <-p.done; timer.Stop() }()
	m.mu.Lock()
	m.logins[p.ID] = p
	m.mu.Unlock()
	return &p.Pending, nil
}

// serveRedirect receives the authorization response on ln (one good
// redirect ends it), exchanges the code and finishes p.
func (m *Manager) serveRedirect(p *pending, ln net.Listener, rec *Record, c client, issRequired bool, state, verifier, redirect string, done func(*Record) (*Info, error)) {
	mux := http.NewServeMux()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != state {
			// Not our authorization response: ignore it, keep waiting.
			http.Error(w, "mcpx: this is not the login mcpx is waiting for", http.StatusBadRequest)
			return
		}
		var info *Info
		err := func() error {
			if err := checkIssuer(q, rec.Issuer, issRequired); err != nil {
				return err
			}
			if e := q.Get("error"); e != "" {
				return &OAuthError{Code: e, Description: q.Get("error_description")}
			}
			code := q.Get("code")
			if code == "" {
				return errors.New("the redirect carries no code")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
				"code_verifier": {verifier}, "resource": {rec.Resource}}
			n := *rec
			if err := m.token(ctx, &n, c, form); err != nil {
				return fmt.Errorf("exchange the code at %s: %w", rec.TokenEndpoint, err)
			}
			var err error
			info, err = done(&n)
			return err
		}()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<!doctype html><title>mcpx</title><p>mcpx: login to %s failed: %s</p>", html.EscapeString(rec.Server), html.EscapeString(err.Error()))
			p.finish(nil, fmt.Errorf("login to %s: %w", rec.Server, err))
		} else {
			fmt.Fprintf(w, "<!doctype html><title>mcpx</title><p>mcpx: logged in to %s. You can close this window.</p>", html.EscapeString(rec.Server))
			p.finish(info, nil)
		}
		go p.stop()
	})
	p.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	go func() { _ = srv.Serve(ln) }()
}

// checkIssuer applies RFC 9207 §2.4 to an authorization response (q), as
// the MCP spec of 2026-07-28 asks (SEP-2468): an iss present must be the
// issuer of the authorization server the request went to, compared as
// plain strings (no URL normalisation: a trailing "/" or a different case
// is another issuer); an iss absent is refused only when that server's
// metadata says it always sends one. Checked before anything else of the
// response (an error response carries iss too), so a response meant for
// another authorization server is never acted on: the mix-up attack.
func checkIssuer(q url.Values, issuer string, required bool) error {
	iss, present := q["iss"]
	switch {
	case present && (len(iss) != 1 || iss[0] != issuer):
		return fmt.Errorf("the authorization response came from issuer %q, not %q (RFC 9207)", strings.Join(iss, ", "), issuer)
	case !present && required:
		return fmt.Errorf("the authorization response carries no iss, although authorization server %s says it always sends one (RFC 9207)", issuer)
	}
	return nil
}

// loginScope is the scope a new login of s asks for: the mcpx.auth
// scopes, else what discovery found (the challenge, else the resource's
// scopes_supported); with the scopes the current login holds when it is
// with the same authorization server, and a step-up pending after a 403
// insufficient_scope (SEP-2350: re-authorising asks for the union, so a
// login for one tool does not lose what another needed). A login with
// another authorization server starts over: its scopes are another
// server's (SEP-2352).
func (m *Manager) loginScope(s Server, d *discovery) string {
	scope := d.scope
	if s.Auth != nil && len(s.Auth.Scopes) > 0 {
		scope = strings.Join(s.Auth.Scopes, " ")
	}
	prev, stepUp, _, err := m.source(s).loginState()
	if err != nil {
		// The login replaces what cannot be read: it builds on nothing.
		m.logf("auth: %s: %v", s.Name, err)
		prev = nil
	}
	if prev == nil {
		return scopeUnion(scope, stepUp)
	}
	if !sameIssuer(prev.Issuer, d.as.Issuer) {
		m.logf("auth: %s: authorization server changed from %s to %s; registering with the new one", s.Name, prev.Issuer, d.as.Issuer)
		return scope
	}
	return scopeUnion(scope, prev.Scope, stepUp)
}

// beginDevice starts the device authorization grant (RFC 8628) and polls
// for its approval in the background.
func (m *Manager) beginDevice(ctx context.Context, p *pending, rec *Record, c client, ep string, done func(*Record) (*Info, error)) error {
	form := url.Values{"resource": {rec.Resource}}
	if rec.Scope != "" {
		form.Set("scope", rec.Scope)
	}
	var dr struct {
		DeviceCode              string `json:"device_code"`
		UserCode                string `json:"user_code"`
		VerificationURI         string `json:"verification_uri"`
		VerificationURIComplete string `json:"verification_uri_complete"`
		ExpiresIn               int64  `json:"expires_in"`
		Interval                int64  `json:"interval"`
	}
	if err := m.postForm(ctx, ep, c, form, &dr); err != nil {
		return fmt.Errorf("start the device authorization at %s: %w", ep, err)
	}
	if dr.DeviceCode == "" || dr.UserCode == "" || dr.VerificationURI == "" {
		return fmt.Errorf("the device authorization answer of %s is incomplete", ep)
	}
	p.URL, p.UserCode = dr.VerificationURIComplete, dr.UserCode
	if p.URL == "" {
		p.URL = dr.VerificationURI
	}
	interval := time.Duration(max(dr.Interval, 1)) * time.Second
	if dr.Interval == 0 {
		interval = 5 * time.Second
	}
	stop := make(chan struct{})
	var stopped bool
	p.stop = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if !stopped {
			stopped = true
			close(stop)
		}
	}
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			n := *rec
			err := m.token(ctx, &n, c, url.Values{"grant_type": {deviceGrant}, "device_code": {dr.DeviceCode}})
			cancel()
			var oe *OAuthError
			switch {
			case errors.As(err, &oe) && oe.Code == "authorization_pending":
				continue
			case errors.As(err, &oe) && oe.Code == "slow_down":
				interval += 5 * time.Second
				continue
			case err != nil:
				p.finish(nil, fmt.Errorf("login to %s: %w", rec.Server, err))
				return
			}
			info, err := done(&n)
			p.finish(info, err)
			return
		}
	}()
	return nil
}

// WaitLogin waits for the login id to finish. When ctx ends first the
// login is abandoned.
func (m *Manager) WaitLogin(ctx context.Context, id string) (*Info, error) {
	m.mu.Lock()
	p := m.logins[id]
	m.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("no login %q is waiting (it finished, timed out or was never started)", id)
	}
	defer func() {
		m.mu.Lock()
		delete(m.logins, id)
		m.mu.Unlock()
	}()
	select {
	case <-p.done:
		return p.info, p.err
	case <-ctx.Done():
		p.finish(nil, ctx.Err())
		p.stop()
		return nil, ctx.Err()
	}
}
