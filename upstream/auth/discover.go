package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// resourceMetadata is an OAuth protected resource metadata document (RFC
// 9728 §2), the fields mcpx uses.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is an authorization server's metadata (RFC 8414 §2, and
// the OpenID Connect discovery fields of the same names).
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	// IssParameterSupported: the authorization server puts iss in every
	// authorization response (RFC 9207 §3), so one without it is refused.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
}

// discovery is what the MCP authorization spec's discovery found for one
// server.
type discovery struct {
	resource string // the canonical resource URI (RFC 8707)
	scope    string // from the 401 challenge or the resource metadata
	as       serverMetadata
	// legacy: the server is on the 2025-03-26 authorization spec (no
	// protected resource metadata; legacyDiscover).
	legacy bool
}

// challenge is a parsed WWW-Authenticate: Bearer challenge.
type challenge struct {
	bearer           bool
	resourceMetadata string
	scope            string
	err              string
}

// or is c with what it lacks taken from d.
func (c challenge) or(d challenge) challenge {
	c.bearer = c.bearer || d.bearer
	if c.resourceMetadata == "" {
		c.resourceMetadata = d.resourceMetadata
	}
	if c.scope == "" {
		c.scope = d.scope
	}
	return c
}

// parseChallenge reads the Bearer challenge of WWW-Authenticate values
// (RFC 6750 §3, RFC 9728 §5.1). Other schemes are ignored.
func parseChallenge(values []string) challenge {
	var c challenge
	for _, v := range values {
		rest := strings.TrimSpace(v)
		scheme, params, _ := strings.Cut(rest, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		c.bearer = true
		for _, kv := range splitParams(params) {
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			val = strings.Trim(strings.TrimSpace(val), `"`)
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "resource_metadata":
				c.resourceMetadata = val
			case "scope":
				c.scope = val
			case "error":
				c.err = val
			}
		}
		return c
	}
	return c
}

// splitParams splits auth-params on commas outside quotes.
func splitParams(s string) []string {
	var out []string
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"':
			quoted = !quoted
			b.WriteByte(ch)
		case ch == '\\' && quoted && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case ch == ',' && !quoted:
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(ch)
		}
	}
	return append(out, b.String())
}

// errNoLogin is a server that answered without asking for a login and
// publishes no protected resource metadata.
var errNoLogin = errors.New("the server answers without a login and publishes no OAuth metadata (RFC 9728)")

// errNotFound is a metadata URL that has no document.
var errNotFound = errors.New("not found")

// getJSON fetches a metadata document. Bodies are bounded; an error never
// quotes the body.
func (m *Manager) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	resp, err := m.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		return fmt.Errorf("GET %s: %w", u, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	// Not a metadata document (an MCP endpoint answering a GET with an
	// event stream would never end): as good as absent.
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "json") {
		return fmt.Errorf("GET %s: %w (Content-Type %s)", u, errNotFound, ct)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: decode: %w", u, err)
	}
	return nil
}

// protocolVersion is sent with discovery requests, as the spec asks.
const protocolVersion = "2025-06-18"

// discover runs the MCP authorization spec's discovery for the server at
// serverURL: an unauthenticated request for its 401 challenge (or the last
// challenge a request met, when this one meets none), the protected
// resource metadata it names (or the well-known locations), then the
// metadata of its first authorization server. A server that publishes no
// protected resource metadata is on the 2025-03-26 authorization spec
// (legacyDiscover).
func (m *Manager) discover(ctx context.Context, s Server) (*discovery, error) {
	su, err := url.Parse(s.URL)
	if err != nil || su.Host == "" {
		return nil, fmt.Errorf("server URL is not absolute")
	}
	ch, err := m.probe(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, _, last, err := m.source(s).loginState(); err == nil && last.bearer {
		ch = ch.or(last)
	}
	prm, found, err := m.resourceMetadata(ctx, su, ch)
	if err != nil {
		return nil, err
	}
	if !found && !ch.bearer {
		return nil, errNoLogin
	}
	if !found {
		return m.legacyDiscover(ctx, su, ch)
	}
	d := &discovery{scope: ch.scope, resource: canonicalResource(su)}
	if prm.Resource != "" {
		if !sameOrigin(prm.Resource, s.URL) {
			return nil, fmt.Errorf("protected resource metadata names resource %s, which is not on the server's origin %s", prm.Resource, su.Scheme+"://"+su.Host)
		}
		d.resource = prm.Resource
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("protected resource metadata names no authorization server")
	}
	if d.scope == "" && len(prm.ScopesSupported) > 0 {
		d.scope = strings.Join(prm.ScopesSupported, " ")
	}
	as, err := m.serverMetadata(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return nil, err
	}
	d.as = *as
	return d, nil
}

// resourceMetadata reads the server's protected resource metadata (RFC
// 9728): at the URL of the challenge, else at the well-known URL with the
// resource's path, else at the root. found is false when none has one.
func (m *Manager) resourceMetadata(ctx context.Context, su *url.URL, ch challenge) (prm resourceMetadata, found bool, err error) {
	var candidates []string
	if ch.resourceMetadata != "" {
		candidates = append(candidates, ch.resourceMetadata)
	}
	origin := su.Scheme + "://" + su.Host
	if p := strings.TrimSuffix(su.Path, "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	for _, c := range candidates {
		err := m.getJSON(ctx, c, &prm)
		if err == nil {
			return prm, true, nil
		}
		if ch.resourceMetadata != "" && c == ch.resourceMetadata && !errors.Is(err, errNotFound) {
			return prm, false, fmt.Errorf("read protected resource metadata: %w", err)
		}
	}
	return prm, false, nil
}

// authorizationServers are the issuers the server's protected resource
// metadata names now (none when it publishes no such metadata).
func (m *Manager) authorizationServers(ctx context.Context, s Server, ch challenge) ([]string, error) {
	su, err := url.Parse(s.URL)
	if err != nil || su.Host == "" {
		return nil, fmt.Errorf("server URL is not absolute")
	}
	prm, found, err := m.resourceMetadata(ctx, su, ch)
	if err != nil || !found {
		return nil, err
	}
	return prm.AuthorizationServers, nil
}

// legacyDiscover is discovery for a server on the 2025-03-26 authorization
// spec, which has no protected resource metadata: the authorization server
// is at the MCP server's origin (its "authorization base URL"), its
// metadata at /.well-known/oauth-authorization-server there (or OpenID
// discovery), and without metadata it has the default endpoints
// /authorize, /token and /register. The issuer such metadata names is
// accepted when it is on that origin (the spec derives the metadata URL
// from the server, not from an issuer, so RFC 8414's identity check does
// not apply; a document naming another origin is still refused).
func (m *Manager) legacyDiscover(ctx context.Context, su *url.URL, ch challenge) (*discovery, error) {
	origin := su.Scheme + "://" + su.Host
	if su.Scheme != "https" && !(su.Scheme == "http" && isLoopbackHost(su.Hostname())) {
		return nil, fmt.Errorf("the server publishes no protected resource metadata and is not an https URL, so its origin cannot be its authorization server")
	}
	d := &discovery{scope: ch.scope, resource: canonicalResource(su), legacy: true}
	for _, u := range []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"} {
		var md serverMetadata
		err := m.getJSON(ctx, u, &md)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read authorization server metadata: %w", err)
		}
		if md.Issuer == "" || !sameOrigin(md.Issuer, origin) {
			return nil, fmt.Errorf("authorization server metadata at %s names issuer %q, which is not on the server's origin %s", u, md.Issuer, origin)
		}
		if err := md.check(u); err != nil {
			return nil, err
		}
		d.as = md
		return d, nil
	}
	d.as = serverMetadata{Issuer: origin, AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint: origin + "/token", RegistrationEndpoint: origin + "/register"}
	return d, nil
}

// probe makes the unauthenticated request whose 401 carries the challenge.
// A server that answers without asking for a login gets a challenge with
// bearer false (discovery still proceeds from the well-known URLs).
func (m *Manager) probe(ctx context.Context, s Server) (challenge, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"mcpx","version":"login"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(body))
	if err != nil {
		return challenge{}, fmt.Errorf("server URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range s.Headers {
		if !strings.EqualFold(k, "Authorization") {
			req.Header.Set(k, v)
		}
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return challenge{}, fmt.Errorf("reach the server: %w", unwrapURL(err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return challenge{}, nil
	}
	return parseChallenge(resp.Header.Values("WWW-Authenticate")), nil
}

// serverMetadata fetches the authorization server metadata of issuer: RFC
// 8414 (path inserted after the well-known prefix), then OpenID discovery
// (inserted, then appended). The issuer it states must be issuer.
func (m *Manager) serverMetadata(ctx context.Context, issuer string) (*serverMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" || (iu.Scheme != "https" && !(iu.Scheme == "http" && isLoopbackHost(iu.Hostname()))) {
		return nil, fmt.Errorf("authorization server %q is not an https URL", issuer)
	}
	origin := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.Path, "/")
	urls := []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
	}
	if p != "" {
		urls = append(urls, origin+p+"/.well-known/openid-configuration")
	}
	var last error
	for _, u := range urls {
		var md serverMetadata
		if err := m.getJSON(ctx, u, &md); err != nil {
			last = err
			if errors.Is(err, errNotFound) {
				continue
			}
			return nil, fmt.Errorf("read authorization server metadata: %w", err)
		}
		if !sameIssuer(md.Issuer, issuer) {
			return nil, fmt.Errorf("authorization server metadata at %s names issuer %q, not %q", u, md.Issuer, issuer)
		}
		if err := md.check(u); err != nil {
			return nil, err
		}
		return &md, nil
	}
	return nil, fmt.Errorf("find the metadata of authorization server %s: %w", issuer, last)
}

// check refuses metadata (read at u) that mcpx cannot log in with.
func (md *serverMetadata) check(u string) error {
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
		return fmt.Errorf("authorization server metadata at %s lacks the authorization or token endpoint", u)
	}
	// The MCP spec: without S256 in the metadata, refuse to proceed.
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("authorization server %s does not offer PKCE with S256", md.Issuer)
	}
	return nil
}

// sameIssuer compares the issuer identifier a protected resource names
// with the one an authorization server's metadata states: identical, but
// for a terminating "/", which RFC 8414 §3.1 removes when it builds the
// metadata URL (so both forms reach the same document). The iss of an
// authorization response is compared exactly instead (RFC 9207 §2.4).
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// canonicalResource is the server URL as a resource indicator: no
// fragment, no query.
func canonicalResource(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment, c.RawQuery = "", "", ""
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	return c.String()
}

func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// unwrapURL drops net/http's *url.Error wrapper: its text repeats the URL,
// whose query may carry secrets.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
