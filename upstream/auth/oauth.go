package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// OAuthError is an error response of an authorization server (RFC 6749
// §5.2). Its text carries the error code and description only.
type OAuthError struct {
	Status      int
	Code        string
	Description string
}

func (e *OAuthError) Error() string {
	if e.Description != "" {
		return fmt.Sprintf("%s (%s)", e.Code, e.Description)
	}
	if e.Code != "" {
		return e.Code
	}
	return fmt.Sprintf("HTTP %d", e.Status)
}

// client is how mcpx authenticates to one authorization server.
type client struct {
	id, secret, method string
}

// clientOf is the client a record was issued to; a secret from the
// mcpx.auth block fills in when the record keeps none.
func clientOf(r *Record, a *config.Auth) client {
	c := client{id: r.ClientID, secret: r.ClientSecret, method: r.AuthMethod}
	if c.secret == "" && a != nil && a.ClientID == r.ClientID {
		c.secret = a.ClientSecret
	}
	return c
}

// apply adds the client's authentication to a token, revocation or device
// request (RFC 6749 §2.3.1).
func (c client) apply(req *http.Request, form url.Values) {
	switch {
	case c.method == "client_secret_basic" && c.secret != "":
		req.SetBasicAuth(url.QueryEscape(c.id), url.QueryEscape(c.secret))
	case c.method == "client_secret_post" && c.secret != "":
		form.Set("client_id", c.id)
		form.Set("client_secret", c.secret)
	default:
		form.Set("client_id", c.id)
	}
}

// postForm posts form to endpoint as c and decodes a JSON answer into out
// (nil: ignore the body). A non-2xx answer is an *OAuthError.
func (m *Manager) postForm(ctx context.Context, endpoint string, c client, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return err
	}
	c.apply(req, form)
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := m.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", endpoint, unwrapURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("POST %s: %w", endpoint, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Code string `json:"error"`
			Desc string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		return &OAuthError{Status: resp.StatusCode, Code: e.Code, Description: e.Desc}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		// Never quote the body: it may hold tokens.
		return fmt.Errorf("POST %s: the answer does not decode as JSON", endpoint)
	}
	return nil
}

// tokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// token calls the token endpoint and applies the answer to r (keeping the
// refresh token and scope when the answer has none).
func (m *Manager) token(ctx context.Context, r *Record, c client, form url.Values) error {
	var tr tokenResponse
	if err := m.postForm(ctx, r.TokenEndpoint, c, form, &tr); err != nil {
		return err
	}
	if tr.AccessToken == "" {
		return errors.New("the token endpoint answered without an access token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "Bearer") {
		return fmt.Errorf("the token endpoint issued a %q token; mcpx uses Bearer tokens", tr.TokenType)
	}
	now := m.now()
	r.AccessToken, r.TokenType, r.ObtainedAt = tr.AccessToken, "Bearer", now
	if tr.RefreshToken != "" {
		r.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		r.Scope = tr.Scope
	}
	r.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		r.Expiry = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	return nil
}

// refresh runs the refresh_token grant on a copy of r and returns it.
func (m *Manager) refresh(ctx context.Context, r *Record, a *config.Auth) (*Record, error) {
	n := *r
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.RefreshToken}, "resource": {r.Resource}}
	if err := m.token(ctx, &n, clientOf(r, a), form); err != nil {
		return nil, err
	}
	return &n, nil
}

// revoke revokes r's refresh token and access token (RFC 7009).
func (m *Manager) revoke(ctx context.Context, r *Record, a *config.Auth) error {
	c := clientOf(r, a)
	var errs []error
	if r.RefreshToken != "" {
		errs = append(errs, m.postForm(ctx, r.RevocationEndpoint, c, url.Values{"token": {r.RefreshToken}, "token_type_hint": {"refresh_token"}}, nil))
	}
	if r.AccessToken != "" {
		errs = append(errs, m.postForm(ctx, r.RevocationEndpoint, c, url.Values{"token": {r.AccessToken}, "token_type_hint": {"access_token"}}, nil))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("revoke at %s: %w", r.RevocationEndpoint, err)
	}
	return nil
}

// register obtains a client for d: the mcpx.auth clientId, a client ID
// metadata document URL where the server supports those, else dynamic
// registration (RFC 7591) for redirect (and the device grant when asked).
func (m *Manager) register(ctx context.Context, s Server, d *discovery, redirect string, device bool) (client, error) {
	a := s.Auth
	if a != nil && a.ClientID != "" {
		c := client{id: a.ClientID, secret: a.ClientSecret, method: "none"}
		if c.secret != "" {
			c.method = "client_secret_basic" // RFC 8414's default when the list is absent
			if len(d.as.TokenEndpointAuthMethodsSupported) > 0 && !slices.Contains(d.as.TokenEndpointAuthMethodsSupported, "client_secret_basic") {
				c.method = "client_secret_post"
			}
		}
		return c, nil
	}
	if a != nil && a.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported {
		return client{id: a.ClientMetadataURL, method: "none"}, nil
	}
	if d.as.RegistrationEndpoint == "" {
		return client{}, fmt.Errorf("authorization server %s offers no dynamic client registration: register a client with it and set mcpx.auth.clientId for %s (see docs/auth.md)", d.as.Issuer, s.Name)
	}
	grants := []string{"authorization_code", "refresh_token"}
	if device {
		grants = append(grants, deviceGrant)
	}
	reqBody, _ := json.Marshal(map[string]any{
		// A program on the user's machine with a loopback redirect
		// (OpenID Connect Registration §2; SEP-837 asks for it).
		"application_type":           "native",
		"client_name":                "mcpx",
		"redirect_uris":              []string{redirect},
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.RegistrationEndpoint, bytes.NewReader(reqBody))
	if err != nil {
		return client{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := m.http.Do(req)
	if err != nil {
		return client{}, fmt.Errorf("register with %s: %w", d.as.RegistrationEndpoint, unwrapURL(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var e struct {
			Code string `json:"error"`
			Desc string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		return client{}, fmt.Errorf("register with %s: %w", d.as.RegistrationEndpoint, &OAuthError{Status: resp.StatusCode, Code: e.Code, Description: e.Desc})
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ClientID == "" {
		return client{}, fmt.Errorf("register with %s: the answer has no client_id", d.as.RegistrationEndpoint)
	}
	c := client{id: r.ClientID, secret: r.ClientSecret, method: r.AuthMethod}
	if c.method == "" {
		c.method = "none"
		if c.secret != "" {
			c.method = "client_secret_basic"
		}
	}
	return c, nil
}

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// randomToken is 32 random bytes, base64url: PKCE verifiers, states.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// challengeS256 is the PKCE S256 code challenge of verifier (RFC 7636).
func challengeS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
