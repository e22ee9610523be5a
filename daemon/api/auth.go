package api

import "time"

// OAuth routes (docs/auth.md).
const (
	PathAuth      = "/v1/auth"       // GET: AuthResponse
	PathLogin     = "/v1/login"      // POST LoginRequest: LoginStart
	PathLoginWait = "/v1/login/wait" // POST LoginWaitRequest: AuthStatus
	PathLogout    = "/v1/logout"     // POST LogoutRequest: LogoutResponse
)

// CodeLoginRequired (401) is a remote server that needs `mcpx login NS`:
// it has no token, or refreshing its token failed.
const CodeLoginRequired = "login_required"

// CodeInsufficientScope (403) is a remote server that refused a request
// for want of an OAuth scope (403 insufficient_scope): `mcpx login NS`
// asks for Error.Scope, the scopes held and those the server challenged.
// Error.Scope is empty when another login would not help (the login holds
// them, or the authorization server did not grant them when last asked).
const CodeInsufficientScope = "insufficient_scope"

// CodeLoginFailed (502) is a login that could not be started or did not
// complete (discovery, registration, the code exchange, a timeout).
const CodeLoginFailed = "login_failed"

// LoginRequest is POST /v1/login.
type LoginRequest struct {
	Namespace string `json:"namespace"`
	// Device asks for the device authorization grant (RFC 8628).
	Device bool `json:"device,omitempty"`
}

// LoginStart is the answer to POST /v1/login: what the user must open. The
// daemon listens for the redirect (or polls, for the device grant) until
// POST /v1/login/wait returns.
type LoginStart struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	URL       string `json:"url"`
	// UserCode is the code to enter at URL (device grant only).
	UserCode  string    `json:"userCode,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// LoginWaitRequest is POST /v1/login/wait.
type LoginWaitRequest struct {
	ID string `json:"id"`
}

// AuthStatus is one remote server's login as `mcpx auth` shows it. It never
// carries a token.
type AuthStatus struct {
	Namespace  string `json:"namespace"`
	ServerHash string `json:"serverHash"`
	LoggedIn   bool   `json:"loggedIn"`
	Issuer     string `json:"issuer,omitempty"`
	ClientID   string `json:"clientId,omitempty"`
	Scope      string `json:"scope,omitempty"`
	// ExpiresAt is when the access token expires (absent: no expiry
	// given); the daemon refreshes it before then when Refreshable.
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	ObtainedAt  *time.Time `json:"obtainedAt,omitempty"`
	Refreshable bool       `json:"refreshable"`
	// NeedsScope is what the next `mcpx login NS` asks for after the
	// server refused a request for want of scope (absent: nothing
	// pending).
	NeedsScope string `json:"needsScope,omitempty"`
	// Error says why the login state could not be read (an unsafe token
	// file, a variable that is not set).
	Error string `json:"error,omitempty"`
}

// AuthResponse is GET /v1/auth: every remote server of the config.
type AuthResponse struct {
	// Store says where tokens live: "file <dir>" or "keyring".
	Store   string       `json:"store"`
	Servers []AuthStatus `json:"servers"`
}

// LogoutRequest is POST /v1/logout.
type LogoutRequest struct {
	Namespace string `json:"namespace"`
}

// LogoutResponse is the answer to POST /v1/logout.
type LogoutResponse struct {
	Namespace string `json:"namespace"`
	// HadLogin is false when there was nothing to forget.
	HadLogin bool `json:"hadLogin"`
	// Revoked: the authorization server confirmed the revocation (RFC
	// 7009). False when it offers none or it failed (Warning says why).
	Revoked bool   `json:"revoked"`
	Warning string `json:"warning,omitempty"`
}
