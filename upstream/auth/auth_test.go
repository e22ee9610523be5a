package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// env is the OAuth fixture on a test server and a Manager with a movable
// clock and a file store.
type env struct {
	t     *testing.T
	o     *fixture.OAuth
	srv   *httptest.Server
	m     *Manager
	store *FileStore
	s     Server

	mu   sync.Mutex
	skew time.Duration // added to the real time
}

func newEnv(t *testing.T, ttl time.Duration) *env {
	e := &env{t: t}
	e.srv = httptest.NewUnstartedServer(nil)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.o = fixture.NewOAuth(e.srv.URL, fixture.Demo(), ttl)
	e.srv.Config.Handler = e.o
	e.store = &FileStore{Dir: filepath.Join(t.TempDir(), "auth")}
	e.m = New(Options{Store: e.store, Now: e.now, HTTP: &http.Client{Timeout: 20 * time.Second}})
	e.s = Server{Hash: "0123456789abcdef", Name: "remote", URL: e.srv.URL + "/mcp"}
	return e
}

func (e *env) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Add(e.skew)
}

func (e *env) advance(d time.Duration) { e.mu.Lock(); e.skew += d; e.mu.Unlock() }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// login runs a login, the "browser" following the redirects.
func (e *env) login() *Info {
	e.t.Helper()
	ctx := ctxT(e.t)
	p, err := e.m.BeginLogin(ctx, e.s, false)
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(p.URL, "code_challenge_method=S256") || !strings.Contains(p.URL, "resource=") {
		e.t.Fatalf("authorization URL %s lacks PKCE or resource", p.URL)
	}
	resp, err := http.Get(p.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "logged in") {
		e.t.Fatalf("browser: %s %s", resp.Status, body)
	}
	info, err := e.m.WaitLogin(ctx, p.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// initialize posts an MCP initialize through the manager's transport.
func (e *env) initialize() (int, error) {
	return e.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
}

// post sends one JSON-RPC message to the server through the manager's
// round tripper and returns the HTTP status.
func (e *env) post(body string) (int, error) {
	hc := &http.Client{Transport: e.m.RoundTripper(e.s, nil)}
	req, _ := http.NewRequestWithContext(ctxT(e.t), http.MethodPost, e.s.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestNoLoginIsLoginRequired(t *testing.T) {
	e := newEnv(t, 0)
	_, err := e.initialize()
	var le *LoginRequiredError
	if !errors.As(err, &le) || le.Server != "remote" {
		t.Fatalf("err = %v, want *LoginRequiredError", err)
	}
}

func TestLoginCallRefresh(t *testing.T) {
	e := newEnv(t, 5*time.Second)
	info := e.login()
	if info.Issuer != e.srv.URL || info.Scopes != fixture.OAuthScope || !info.Refresh || info.ExpiresAt.IsZero() {
		t.Fatalf("info = %+v", info)
	}
	// The token file: 0600 in a 0700 directory, no token in Info.
	fi, err := os.Stat(filepath.Join(e.store.Dir, string(e.s.Hash)+".json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if di, _ := os.Stat(e.store.Dir); di.Mode().Perm() != 0o700 {
		t.Fatalf("token dir mode %v", di.Mode())
	}
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("call: %d %v", code, err)
	}

	// Near expiry, 20 concurrent requests refresh once.
	before := e.o.Stats().RefreshGrants
	e.advance(5 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if code, err := e.initialize(); err != nil || code != 200 {
				errs <- errors.Join(err, errors.New(http.StatusText(code)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := e.o.Stats().RefreshGrants - before; got != 1 {
		t.Fatalf("%d refresh grants for 20 concurrent calls across an expiry, want 1", got)
	}

	// The server refusing the token (revoked access token) makes the
	// transport refresh and retry.
	rec, _ := e.store.Load(e.s.Hash)
	stats := e.o.Stats()
	resp, err := http.PostForm(e.srv.URL+"/revoke", map[string][]string{"token": {rec.AccessToken}, "client_id": {rec.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("after the access token was revoked: %d %v", code, err)
	}
	if got := e.o.Stats().RefreshGrants - stats.RefreshGrants; got != 1 {
		t.Fatalf("%d refreshes after a 401, want 1", got)
	}

	// A revoked refresh token ends the login with a LoginRequiredError and
	// the tokens are forgotten.
	e.o.RevokeRefreshTokens()
	e.advance(5 * time.Second)
	_, err = e.initialize()
	var le *LoginRequiredError
	if !errors.As(err, &le) || !strings.Contains(le.Reason, "invalid_grant") {
		t.Fatalf("after revocation: %v, want a *LoginRequiredError naming invalid_grant", err)
	}
	if r, err := e.store.Load(e.s.Hash); r != nil || err != nil {
		t.Fatalf("tokens kept after the grant ended: %v %v", r != nil, err)
	}
	// No message ever carries a token.
	for _, tok := range e.o.Stats().Tokens {
		if strings.Contains(err.Error(), tok) {
			t.Fatalf("error %q contains a token", err)
		}
	}
	// A new login works again.
	e.login()
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("after a new login: %d %v", code, err)
	}
}

func TestLogoutRevokes(t *testing.T) {
	e := newEnv(t, 0)
	e.login()
	had, revoked, warn, err := e.m.Logout(ctxT(t), e.s)
	if !had || !revoked || warn != nil || err != nil {
		t.Fatalf("logout: had %v revoked %v warn %v err %v", had, revoked, warn, err)
	}
	if got := e.o.Stats().Revocations; got != 2 {
		t.Fatalf("%d revocations, want 2 (refresh and access token)", got)
	}
	if info, err := e.m.Status(e.s); info != nil || err != nil {
		t.Fatalf("status after logout: %+v %v", info, err)
	}
	if _, err := e.initialize(); !errors.As(err, new(*LoginRequiredError)) {
		t.Fatalf("call after logout: %v", err)
	}
}

func TestDeviceLogin(t *testing.T) {
	e := newEnv(t, 0)
	ctx := ctxT(t)
	p, err := e.m.BeginLogin(ctx, e.s, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.UserCode == "" || !strings.Contains(p.URL, p.UserCode) {
		t.Fatalf("pending %+v", p)
	}
	resp, err := http.Get(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := e.m.WaitLogin(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("call: %d %v", code, err)
	}
}

func TestPreRegisteredClient(t *testing.T) {
	e := newEnv(t, 0)
	// Register by hand (as a user would at the provider's console).
	resp, err := http.Post(e.srv.URL+"/register", "application/json",
		strings.NewReader(`{"redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"client_secret_basic"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := decodeJSON(resp, &reg); err != nil || reg.Secret == "" {
		t.Fatalf("register: %v %+v", err, reg)
	}
	before := e.o.Stats().Registrations
	e.s.Auth = &config.Auth{ClientID: reg.ID, ClientSecretEnv: "X", ClientSecret: reg.Secret}
	e.login()
	if e.o.Stats().Registrations != before {
		t.Fatal("mcpx registered a client although mcpx.auth.clientId is set")
	}
	rec, _ := e.store.Load(e.s.Hash)
	if rec.ClientID != reg.ID || rec.ClientSecret != "" {
		t.Fatalf("record: client %q, secret stored %v", rec.ClientID, rec.ClientSecret != "")
	}
	e.advance(time.Hour) // refresh with the configured secret
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("call: %d %v", code, err)
	}
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func TestFileStoreRefusesUnsafe(t *testing.T) {
	s := &FileStore{Dir: filepath.Join(t.TempDir(), "auth")}
	r := &Record{ServerHash: "00000000000000aa", Server: "x", AccessToken: "secret-token"}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir, "00000000000000aa.json")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(r.ServerHash)
	if !errors.Is(err, ErrUnsafe) || strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("load of a 0644 token file: %v", err)
	}
	os.Chmod(path, 0o600)
	os.Chmod(s.Dir, 0o777)
	if _, err := s.Load(r.ServerHash); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("load from a world-writable directory: %v", err)
	}
	os.Chmod(s.Dir, 0o700)
	got, err := s.Load(r.ServerHash)
	if err != nil || got.AccessToken != "secret-token" {
		t.Fatalf("load: %v", err)
	}
	if strings.Contains(got.String(), "secret-token") {
		t.Fatal("Record.String shows the token")
	}
}

func TestParseChallenge(t *testing.T) {
	c := parseChallenge([]string{`Basic realm="x"`, `Bearer error="invalid_token", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b"`})
	if !c.bearer || c.resourceMetadata != "https://h/.well-known/oauth-protected-resource/mcp" || c.scope != "a b" || c.err != "invalid_token" {
		t.Fatalf("%+v", c)
	}
}

func TestClientMetadataDocument(t *testing.T) {
	e := newEnv(t, 0)
	doc := httptest.NewTLSServer(nil)
	t.Cleanup(doc.Close)
	docURL := doc.URL + "/mcpx-client.json"
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "mcpx", "redirect_uris": []string{"http://127.0.0.1/callback"},
			"token_endpoint_auth_method": "none",
		})
	})
	e.o.AcceptClientMetadataDocuments(doc.Client())
	e.s.Auth = &config.Auth{ClientMetadataURL: docURL}
	e.login()
	st := e.o.Stats()
	if st.Registrations != 0 || st.MetadataDocuments != 1 {
		t.Fatalf("registrations %d, documents fetched %d; want 0 and 1", st.Registrations, st.MetadataDocuments)
	}
	if rec, _ := e.store.Load(e.s.Hash); rec.ClientID != docURL {
		t.Fatalf("client id %q, want the document's URL", rec.ClientID)
	}
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("call: %d %v", code, err)
	}

	// Without support at the authorization server, mcpx registers.
	e2 := newEnv(t, 0)
	e2.s.Auth = &config.Auth{ClientMetadataURL: docURL}
	e2.login()
	if st := e2.o.Stats(); st.Registrations != 1 {
		t.Fatalf("registrations %d, want 1", st.Registrations)
	}
}

// TestTwoDaemonsShareTokens: two Managers over one store (two daemons whose
// configs share a server) see each other's login and never burn each
// other's rotated refresh token.
func TestTwoDaemonsShareTokens(t *testing.T) {
	e := newEnv(t, 5*time.Second)
	other := &env{t: t, o: e.o, srv: e.srv, store: e.store, s: e.s}
	other.m = New(Options{Store: e.store, Now: e.now})

	if _, err := other.initialize(); !errors.As(err, new(*LoginRequiredError)) {
		t.Fatalf("before login: %v", err)
	}
	e.login()
	if code, err := other.initialize(); err != nil || code != 200 {
		t.Fatalf("the other daemon after the login: %d %v", code, err)
	}
	// Both near expiry: the first refreshes (rotating the refresh token);
	// the second takes its result instead of refreshing with a spent one.
	e.advance(5 * time.Second)
	before := e.o.Stats().RefreshGrants
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("first daemon: %d %v", code, err)
	}
	if code, err := other.initialize(); err != nil || code != 200 {
		t.Fatalf("second daemon: %d %v", code, err)
	}
	if got := e.o.Stats().RefreshGrants - before; got != 1 {
		t.Fatalf("%d refreshes by two daemons, want 1", got)
	}
	// A logout through one daemon ends the other's login at its next
	// refresh.
	if _, _, _, err := e.m.Logout(ctxT(t), e.s); err != nil {
		t.Fatal(err)
	}
	e.advance(5 * time.Second)
	if _, err := other.initialize(); !errors.As(err, new(*LoginRequiredError)) {
		t.Fatalf("after a logout elsewhere: %v", err)
	}
}

func TestLoginToServerWithoutOAuth(t *testing.T) {
	plain := httptest.NewServer(fixtureHTTP())
	t.Cleanup(plain.Close)
	m := New(Options{Store: &FileStore{Dir: t.TempDir()}})
	_, err := m.BeginLogin(ctxT(t), Server{Hash: "00000000000000ff", Name: "open", URL: plain.URL + "/mcp"}, false)
	if !errors.Is(err, errNoLogin) {
		t.Fatalf("login to a server without OAuth: %v", err)
	}
}

func fixtureHTTP() http.Handler { return fixture.HTTPHandler(fixture.Demo()) }

// TestDiscoveryPaths: a 401 without resource_metadata leads to the
// well-known URL with the resource's path; an issuer with a path is found
// through OpenID discovery when RFC 8414 has no document; a metadata
// document naming another issuer is refused.
func TestDiscoveryPaths(t *testing.T) {
	var srv *httptest.Server
	var served []string
	var mu sync.Mutex
	issuerOverride := ""
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/.well-known/oauth-protected-resource/mcp":
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL + "/tenant"}, "scopes_supported": []string{"a", "b"}})
		case "/tenant/.well-known/openid-configuration":
			iss := srv.URL + "/tenant"
			if issuerOverride != "" {
				iss = issuerOverride
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "authorization_endpoint": srv.URL + "/a", "token_endpoint": srv.URL + "/t",
				"code_challenge_methods_supported": []string{"S256"}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m := New(Options{Store: &FileStore{Dir: t.TempDir()}})
	d, err := m.discover(ctxT(t), Server{Name: "x", URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if d.resource != srv.URL+"/mcp" || d.scope != "a b" || d.as.TokenEndpoint != srv.URL+"/t" {
		t.Fatalf("discovery: %+v", d)
	}
	want := []string{"/mcp", "/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant", "/tenant/.well-known/openid-configuration"}
	if strings.Join(served, " ") != strings.Join(want, " ") {
		t.Fatalf("requests %q, want %q", served, want)
	}
	issuerOverride = "https://evil.example"
	if _, err := m.discover(ctxT(t), Server{Name: "x", URL: srv.URL + "/mcp"}); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Fatalf("a metadata document naming another issuer: %v", err)
	}
}
