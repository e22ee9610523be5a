package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// TestCheckIssuer: RFC 9207 as SEP-2468 applies it. A present iss is
// compared as a plain string: a trailing "/", a different case or an
// explicit default port is another issuer.
func TestCheckIssuer(t *testing.T) {
	const iss = "https://as.example.com"
	for _, tc := range []struct {
		name     string
		query    string
		required bool
		ok       bool
	}{
		{"matching", "iss=https%3A%2F%2Fas.example.com", true, true},
		{"matching, not advertised", "iss=https%3A%2F%2Fas.example.com", false, true},
		{"absent, not advertised", "", false, true},
		{"absent, advertised", "", true, false},
		{"another issuer", "iss=https%3A%2F%2Fevil.example", false, false},
		{"trailing slash", "iss=https%3A%2F%2Fas.example.com%2F", true, false},
		{"upper case host", "iss=https%3A%2F%2FAS.example.com", true, false},
		{"default port", "iss=https%3A%2F%2Fas.example.com%3A443", true, false},
		{"empty", "iss=", false, false},
		{"twice", "iss=https%3A%2F%2Fas.example.com&iss=https%3A%2F%2Fevil.example", true, false},
	} {
		q, _ := url.ParseQuery(tc.query)
		if err := checkIssuer(q, iss, tc.required); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// loginTampered runs a login whose authorization response the "browser"
// changes with tamper before it reaches mcpx's loopback redirect.
func (e *env) loginTampered(tamper func(q url.Values)) error {
	e.t.Helper()
	ctx := ctxT(e.t)
	p, err := e.m.BeginLogin(ctx, e.s, false)
	if err != nil {
		e.t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(p.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	cb, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || cb.Host == "" {
		e.t.Fatalf("authorization response: %s %q", resp.Status, resp.Header.Get("Location"))
	}
	q := cb.Query()
	tamper(q)
	cb.RawQuery = q.Encode()
	resp, err = http.Get(cb.String())
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = e.m.WaitLogin(ctx, p.ID)
	return err
}

// TestLoginChecksIss: the fixture advertises and sends iss; a response
// from another issuer, or with iss removed, is refused before the code is
// exchanged.
func TestLoginChecksIss(t *testing.T) {
	e := newEnv(t, 0)
	for _, tc := range []struct {
		name   string
		tamper func(q url.Values)
		ok     bool
	}{
		{"as sent", func(url.Values) {}, true},
		{"another issuer", func(q url.Values) { q.Set("iss", "https://evil.example") }, false},
		{"trailing slash", func(q url.Values) { q.Set("iss", q.Get("iss")+"/") }, false},
		{"removed", func(q url.Values) { q.Del("iss") }, false},
	} {
		before := e.o.Stats().CodeGrants
		err := e.loginTampered(tc.tamper)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: login: %v, want ok %v", tc.name, err, tc.ok)
		}
		if got := e.o.Stats().CodeGrants - before; !tc.ok && got != 0 {
			t.Fatalf("%s: the code was exchanged although the response was refused", tc.name)
		}
		if !tc.ok && !strings.Contains(err.Error(), "RFC 9207") {
			t.Fatalf("%s: error %q does not say why", tc.name, err)
		}
	}
}

// TestSameIssuer: the issuer a protected resource names and the one its
// metadata states may differ by a terminating "/" only.
func TestSameIssuer(t *testing.T) {
	if !sameIssuer("https://as.example/t", "https://as.example/t/") || sameIssuer("https://as.example", "https://as.example.evil") ||
		sameIssuer("https://as.example/a", "https://as.example/b") {
		t.Fatal("sameIssuer")
	}
}

// legacyServer is an MCP server on the 2025-03-26 authorization spec: no
// protected resource metadata; md, when not nil, is its authorization
// server metadata at the origin.
func legacyServer(t *testing.T, md func(origin string) map[string]any) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var served []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		switch {
		case r.URL.Path == "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/.well-known/oauth-authorization-server" && md != nil:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(md(srv.URL))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &served
}

// TestLegacyDiscovery: a server without protected resource metadata is on
// the 2025-03-26 authorization spec: its origin's metadata is used even
// when it names an issuer with a path on that origin; without metadata the
// default endpoints at the origin are; metadata naming another origin is
// refused.
func TestLegacyDiscovery(t *testing.T) {
	m := New(Options{Store: &FileStore{Dir: t.TempDir()}})

	srv, _ := legacyServer(t, func(origin string) map[string]any {
		return map[string]any{"issuer": origin + "/oauth", "authorization_endpoint": origin + "/oauth/authorize",
			"token_endpoint": origin + "/oauth/token", "registration_endpoint": origin + "/oauth/register",
			"code_challenge_methods_supported": []string{"S256"}}
	})
	d, err := m.discover(ctxT(t), Server{Hash: "00000000000000a1", Name: "old", URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatalf("metadata at the origin naming issuer …/oauth: %v", err)
	}
	if !d.legacy || d.as.Issuer != srv.URL+"/oauth" || d.as.TokenEndpoint != srv.URL+"/oauth/token" || d.resource != srv.URL+"/mcp" {
		t.Fatalf("discovery: %+v", d)
	}

	srv, served := legacyServer(t, nil)
	d, err = m.discover(ctxT(t), Server{Hash: "00000000000000a2", Name: "older", URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatalf("no metadata at all: %v", err)
	}
	if d.as.Issuer != srv.URL || d.as.AuthorizationEndpoint != srv.URL+"/authorize" || d.as.TokenEndpoint != srv.URL+"/token" ||
		d.as.RegistrationEndpoint != srv.URL+"/register" {
		t.Fatalf("default endpoints: %+v", d.as)
	}
	want := "/mcp /.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource " +
		"/.well-known/oauth-authorization-server /.well-known/openid-configuration"
	if got := strings.Join(*served, " "); got != want {
		t.Fatalf("requests %q, want %q", got, want)
	}

	srv, _ = legacyServer(t, func(origin string) map[string]any {
		return map[string]any{"issuer": "https://evil.example", "authorization_endpoint": "https://evil.example/authorize",
			"token_endpoint": "https://evil.example/token", "code_challenge_methods_supported": []string{"S256"}}
	})
	if _, err := m.discover(ctxT(t), Server{Hash: "00000000000000a3", Name: "bad", URL: srv.URL + "/mcp"}); err == nil || !strings.Contains(err.Error(), "not on the server's origin") {
		t.Fatalf("metadata at the origin naming another origin: %v", err)
	}
}

// TestChallengeRemembered: a server that lets initialize through without
// a token (so the login's own probe meets no challenge) and challenges
// later requests: the login uses the challenge a request met, its scope
// and its metadata URL.
func TestChallengeRemembered(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/mcp":
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"initialize"`) {
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer scope="files:read", resource_metadata="`+srv.URL+`/custom/prm"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/custom/prm":
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}, "scopes_supported": []string{"other"}})
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/a", "token_endpoint": srv.URL + "/t",
				"code_challenge_methods_supported": []string{"S256"}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m := New(Options{Store: &FileStore{Dir: t.TempDir()}})
	s := Server{Hash: "00000000000000c1", Name: "c", URL: srv.URL + "/mcp"}
	if _, err := m.discover(ctxT(t), s); !errors.Is(err, errNoLogin) {
		t.Fatalf("before any challenge: %v, want errNoLogin", err)
	}
	hc := &http.Client{Transport: m.RoundTripper(s, nil)}
	_, err := hc.Post(s.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if !errors.As(err, new(*LoginRequiredError)) {
		t.Fatalf("tools/list without a login: %v", err)
	}
	d, err := m.discover(ctxT(t), s)
	if err != nil || d.scope != "files:read" || d.as.Issuer != srv.URL {
		t.Fatalf("discovery after the challenge: %+v %v", d, err)
	}
}

// TestAuthorizationServerMigration: when the protected resource names
// another authorization server (SEP-2352), a refused token ends the login
// with a reason saying so, its tokens and registration are forgotten, and
// the next login registers with the new server.
func TestAuthorizationServerMigration(t *testing.T) {
	e := newEnv(t, 5*time.Second)
	as2 := httptest.NewServer(nil)
	t.Cleanup(as2.Close)
	o2 := fixture.NewOAuth(as2.URL, fixture.Demo(), 0)
	as2.Config.Handler = o2

	var moved sync.Mutex
	switched := false
	prmURL := e.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		moved.Lock()
		sw := switched
		moved.Unlock()
		switch {
		case sw && r.URL.Path == "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": e.s.URL, "authorization_servers": []string{as2.URL}})
		case sw && r.URL.Path == "/mcp":
			// The old server's tokens mean nothing here any more.
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+prmURL+`"`)
			w.WriteHeader(http.StatusUnauthorized)
		default:
			e.o.ServeHTTP(w, r)
		}
	})
	e.login()
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("before the move: %d %v", code, err)
	}
	moved.Lock()
	switched = true
	moved.Unlock()

	_, err := e.initialize()
	var le *LoginRequiredError
	if !errors.As(err, &le) || !strings.Contains(le.Reason, "authorization server changed") || !strings.Contains(le.Reason, as2.URL) {
		t.Fatalf("after the move: %v, want a login required because the authorization server changed", err)
	}
	if rec, _ := e.store.Load(e.s.Hash); rec != nil {
		t.Fatal("the old server's tokens are still stored")
	}
	if info, _ := e.m.Status(e.s); info != nil {
		t.Fatalf("still logged in: %+v", info)
	}
	// Requests keep saying why until a login.
	if _, err := e.initialize(); !errors.As(err, &le) || !strings.Contains(le.Reason, "changed") {
		t.Fatalf("next request: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	p, err := e.m.BeginLogin(ctx, e.s, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.URL, as2.URL+"/authorize?") || o2.Stats().Registrations != 1 {
		t.Fatalf("the next login: URL %s, %d registrations at the new server", p.URL, o2.Stats().Registrations)
	}
	cancel()
	_, _ = e.m.WaitLogin(ctx, p.ID) // abandon it
}

// TestLoginScopeUnion: a new login asks for the scopes the current one
// holds too, unless that one is with another authorization server.
func TestLoginScopeUnion(t *testing.T) {
	e := newEnv(t, 0)
	scopeOf := func() string {
		ctx, cancel := context.WithCancel(context.Background())
		p, err := e.m.BeginLogin(ctx, e.s, false)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		_, _ = e.m.WaitLogin(ctx, p.ID) // abandon it
		u, _ := url.Parse(p.URL)
		return u.Query().Get("scope")
	}
	if got := scopeOf(); got != fixture.OAuthScope {
		t.Fatalf("first login asks for %q", got)
	}
	save := func(issuer, scope string) {
		e.m.source(e.s).set(&Record{ServerHash: e.s.Hash, Server: "remote", Issuer: issuer, Scope: scope, AccessToken: "x", TokenEndpoint: e.srv.URL + "/token"}, scope)
	}
	save(e.srv.URL, "mcp mcp:write")
	if got := scopeOf(); got != "mcp mcp:write" {
		t.Fatalf("login holding mcp:write asks for %q", got)
	}
	save("https://old.example", "mcp:write")
	if got := scopeOf(); got != fixture.OAuthScope {
		t.Fatalf("login after another authorization server asks for %q", got)
	}
	e.s.Auth = &config.Auth{Scopes: []string{"mcp"}}
	save(e.srv.URL, "mcp mcp:write")
	if got := scopeOf(); got != "mcp mcp:write" {
		t.Fatalf("configured scopes with more held: asks for %q", got)
	}
}
