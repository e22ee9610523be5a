package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// TestOAuthServer: a server that needs a login fails calls with a
// *LoginRequiredError (never a start failure, never a cooldown) until a
// login, works after it, and fails with it again when the refresh is
// refused.
func TestOAuthServer(t *testing.T) {
	t.Run("streamable HTTP", func(t *testing.T) { testOAuthServer(t, config.TransportHTTP) })
	t.Run("SSE", func(t *testing.T) { testOAuthServer(t, config.TransportSSE) })
}

func testOAuthServer(t *testing.T, transport string) {
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	o := fixture.NewOAuth(srv.URL, fixture.Full(), 5*time.Second)
	url := srv.URL + "/mcp"
	if transport == config.TransportSSE {
		// The same login in front of the HTTP+SSE transport.
		sse := o.Protect(fixture.SSEHandler(fixture.Full(), srv.URL))
		mux := http.NewServeMux()
		mux.Handle("/sse", sse)
		mux.Handle("/message", sse)
		mux.Handle("/", o)
		srv.Config.Handler = mux
		url = srv.URL + "/sse"
	} else {
		srv.Config.Handler = o
	}

	var mu sync.Mutex
	skew := time.Duration(0)
	m := auth.New(auth.Options{
		Store: &auth.FileStore{Dir: filepath.Join(t.TempDir(), "auth")},
		Now:   func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) },
	})
	p := newPools(t, Options{Auth: m})
	spec := Spec{Server: &config.Server{Name: "remote", URL: url, Transport: transport}, Hash: "0000000000000r01"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for i := range 2 {
		_, err := p.Call(ctx, spec, Caller{}, "echo", []byte(`{"text":"x"}`))
		var le *LoginRequiredError
		if !errors.As(err, &le) || le.Server != "remote" {
			t.Fatalf("call %d before login: %v (%T), want *LoginRequiredError", i, err, err)
		}
	}

	pend, err := m.BeginLogin(ctx, auth.Server{Hash: spec.Hash, Name: "remote", URL: spec.Server.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(pend.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := m.WaitLogin(ctx, pend.ID); err != nil {
		t.Fatal(err)
	}
	if got := call(t, p, spec, Caller{}, "echo", `{"text":"in"}`); got != "in" {
		t.Fatalf("echo after login: %q", got)
	}

	o.RevokeRefreshTokens()
	mu.Lock()
	skew = time.Minute
	mu.Unlock()
	_, err = p.Call(ctx, spec, Caller{}, "echo", []byte(`{"text":"x"}`))
	var le *LoginRequiredError
	if !errors.As(err, &le) {
		t.Fatalf("call after the refresh token was revoked: %v (%T)", err, err)
	}
}

// TestOAuthInsufficientScope: a call refused for want of scope fails with
// an *InsufficientScopeError; the connection it was made on stays (it was
// answered, not broken) and serves the next call, and a step-up login
// makes the refused call work on it.
func TestOAuthInsufficientScope(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	o := fixture.NewOAuth(srv.URL, fixture.Full(), time.Minute)
	o.RequireScope("add_note", fixture.OAuthWriteScope)
	srv.Config.Handler = o
	m := auth.New(auth.Options{Store: &auth.FileStore{Dir: filepath.Join(t.TempDir(), "auth")}})
	p := newPools(t, Options{Auth: m})
	spec := Spec{Server: &config.Server{Name: "remote", URL: srv.URL + "/mcp", Transport: config.TransportHTTP}, Hash: "0000000000000r02"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	login := func() {
		t.Helper()
		pend, err := m.BeginLogin(ctx, auth.Server{Hash: spec.Hash, Name: "remote", URL: spec.Server.URL}, false)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(pend.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := m.WaitLogin(ctx, pend.ID); err != nil {
			t.Fatal(err)
		}
	}
	login()
	if got := call(t, p, spec, Caller{}, "echo", `{"text":"a"}`); got != "a" {
		t.Fatalf("echo: %q", got)
	}
	for i := range 2 {
		_, err := p.Call(ctx, spec, Caller{}, "add_note", []byte(`{"name":"n","text":"t"}`))
		var se *InsufficientScopeError
		if !errors.As(err, &se) || se.Scope != "mcp mcp:write" {
			t.Fatalf("add_note %d: %v (%T), want *InsufficientScopeError", i, err, err)
		}
		if live := p.Live(spec.Hash); live != 1 {
			t.Fatalf("after refusal %d: %d live instances, want the one that was refused", i, live)
		}
	}
	login()
	if got := call(t, p, spec, Caller{}, "add_note", `{"name":"n","text":"t"}`); got == "" {
		t.Fatal("add_note after the step-up login answered nothing")
	}
	if o.Stats().Forbidden != 2 {
		t.Fatalf("%d requests refused for scope, want 2", o.Stats().Forbidden)
	}
}
