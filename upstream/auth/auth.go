// Package auth is mcpx's OAuth 2.1 client for remote MCP servers, as the
// MCP authorization spec defines it: discovery (RFC 9728 protected resource
// metadata, then RFC 8414 or OpenID discovery), client registration (a
// client ID metadata document, else dynamic registration per RFC 7591, else
// the clientId of the server's mcpx.auth block), the authorization code
// grant with PKCE S256 and the resource parameter (RFC 8707) through a
// loopback redirect on an ephemeral port, the device grant (RFC 8628),
// refresh, and revocation (RFC 7009).
//
// A 403 with an insufficient_scope challenge becomes an
// *InsufficientScopeError, and the next login asks for the challenged
// scopes with those held (step-up); a protected resource whose
// authorization server changed has its login forgotten (SEP-2352). Servers
// on the 2025-03-26 authorization spec (no protected resource metadata)
// are logged into through their origin's metadata or default endpoints.
//
// Tokens are kept per serverHash in a Store and are never written to an
// error, a log line or any other file. A Manager hands each HTTP connection
// an http.RoundTripper that adds the server's access token, refreshes it
// before it expires and after a 401 (one refresh at a time per server;
// requests arriving meanwhile wait for it) and turns a login that is needed
// into a *LoginRequiredError.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Server is what the Manager needs to know of one remote server.
type Server struct {
	Hash    config.ServerHash
	Name    string
	URL     string            // expanded
	Headers map[string]string // expanded; an Authorization header here turns OAuth off
	Auth    *config.Auth      // the mcpx.auth block, expanded; may be nil
}

// LoginRequiredError is a server that needs a login mcpx does not have (no
// token, or its refresh failed). The remedy is `mcpx login <Server>`.
type LoginRequiredError struct {
	Server string
	Reason string
}

func (e *LoginRequiredError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("server %s needs a login", e.Server)
	}
	return fmt.Sprintf("server %s needs a login: %s", e.Server, e.Reason)
}

// Options configure a Manager.
type Options struct {
	// Store keeps the tokens (required).
	Store Store
	// HTTP makes the requests to authorization servers (nil: a client
	// with a 30 s timeout).
	HTTP *http.Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logf logs; never given a token (may be nil).
	Logf func(format string, args ...any)
}

// Manager holds the token state of every server of a daemon. Safe for
// concurrent use.
type Manager struct {
	store Store
	http  *http.Client
	now   func() time.Time
	logf  func(string, ...any)

	mu      sync.Mutex
	sources map[config.ServerHash]*source
	logins  map[string]*pending
}

// New returns a Manager.
func New(o Options) *Manager {
	m := &Manager{store: o.Store, http: o.HTTP, now: o.Now, logf: o.Logf,
		sources: map[config.ServerHash]*source{}, logins: map[string]*pending{}}
	if m.http == nil {
		m.http = &http.Client{Timeout: 30 * time.Second}
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.logf == nil {
		m.logf = func(string, ...any) {}
	}
	return m
}

// StoreName says where tokens live.
func (m *Manager) StoreName() string { return m.store.Name() }

// source returns h's token source, creating it.
func (m *Manager) source(s Server) *source {
	m.mu.Lock()
	defer m.mu.Unlock()
	src := m.sources[s.Hash]
	if src == nil {
		src = &source{m: m, hash: s.Hash}
		m.sources[s.Hash] = src
	}
	src.setServer(s)
	return src
}

// Info is what `mcpx auth` shows of one server's login: never a token.
type Info struct {
	Server     string            `json:"server"`
	ServerHash config.ServerHash `json:"serverHash"`
	Issuer     string            `json:"issuer"`
	ClientID   string            `json:"clientId"`
	Scopes     string            `json:"scope,omitempty"`
	ExpiresAt  time.Time         `json:"expiresAt,omitzero"`
	ObtainedAt time.Time         `json:"obtainedAt"`
	Refresh    bool              `json:"refreshable"`
	// NeedsScope is what the next login asks for after the server
	// refused a request for want of scope ("" when nothing is pending).
	NeedsScope string `json:"needsScope,omitempty"`
}

func infoOf(r *Record) *Info {
	return &Info{Server: r.Server, ServerHash: r.ServerHash, Issuer: r.Issuer, ClientID: r.ClientID,
		Scopes: r.Scope, ExpiresAt: r.Expiry, ObtainedAt: r.ObtainedAt, Refresh: r.RefreshToken != ""}
}

// Status returns s's login, or nil when it has none.
func (m *Manager) Status(s Server) (*Info, error) {
	src := m.source(s)
	src.mu.Lock()
	defer src.mu.Unlock()
	if err := src.loadLocked(); err != nil {
		return nil, err
	}
	if src.rec == nil {
		return nil, nil
	}
	info := infoOf(src.rec)
	info.NeedsScope = src.stepUp
	return info, nil
}

// Logout revokes s's tokens where the authorization server offers
// revocation (RFC 7009) and forgets them. revoked reports whether the
// server confirmed; a failed revocation is returned as warn, and the
// tokens are forgotten regardless. had is false when there was no login.
func (m *Manager) Logout(ctx context.Context, s Server) (had, revoked bool, warn error, err error) {
	src := m.source(s)
	src.mu.Lock()
	defer src.mu.Unlock()
	if err := src.loadLocked(); err != nil && !errors.Is(err, ErrUnsafe) {
		return false, false, nil, err
	}
	rec := src.rec
	if rec != nil && rec.RevocationEndpoint != "" {
		warn = m.revoke(ctx, rec, s.Auth)
		revoked = warn == nil
	}
	if err := m.store.Delete(s.Hash); err != nil {
		return rec != nil, revoked, warn, err
	}
	src.rec, src.failed = nil, nil
	return rec != nil, revoked, warn, nil
}
