// Package api holds the wire types of the daemon's HTTP API and of the files
// the daemon and the CLI both read (info file, key record). It is the only
// place the CLI side and the daemon side share besides config and cache, so
// it imports nothing of either side.
//
// Every JSON name here means one thing everywhere (DESIGN.md §3): daemonKey,
// schemaHash and serverHash are the three digests; configHash does not exist.
package api

import (
	"encoding/json"
	"time"
)

// Routes, all under /v1.
const (
	PathHealth     = "/v1/health"
	PathStatus     = "/v1/status"
	PathResolve    = "/v1/resolve"    // GET ?dir=ABS
	PathNamespaces = "/v1/namespaces" // GET
	PathTools      = "/v1/tools"      // GET ?ns=NS
	PathSearch     = "/v1/search"     // GET ?q=WORDS
	PathSchema     = "/v1/schema"     // GET ?ns=NS[&tool=TOOL]
	PathCall       = "/v1/call"       // POST CallRequest
	PathRefresh    = "/v1/refresh"    // POST RefreshRequest
	PathRestart    = "/v1/restart"    // POST RestartRequest
	PathShutdown   = "/v1/shutdown"   // POST
)

// Error codes carried in Error.Code. The HTTP status is given beside each.
const (
	CodeBadRequest           = "bad_request"           // 400
	CodeUnknownNamespace     = "unknown_namespace"     // 404
	CodeUnknownTool          = "unknown_tool"          // 404
	CodeConfig               = "config_error"          // 422
	CodeUnsetVariable        = "unset_variable"        // 422
	CodeStartFailed          = "server_start_failed"   // 502
	CodeCooldown             = "cooldown"              // 503
	CodeTimeout              = "timeout"               // 504
	CodeTransport            = "transport_error"       // 502
	CodeConfirmation         = "confirmation_required" // 409
	CodePolicyDenied         = "policy_denied"         // 403
	CodeAnnotationsUnknown   = "annotations_unknown"   // 409: policy cannot be decided
	CodeShuttingDown         = "shutting_down"         // 503
	CodeInternal             = "internal"              // 500
	CodeForbidden            = "forbidden"             // 403: peer uid mismatch
	CodeRequestTooLarge      = "request_too_large"     // 413
	CodeMethodNotAllowed     = "method_not_allowed"    // 405
	CodeNotFound             = "not_found"             // 404
	CodeServerError          = "server_error"          // 502: the MCP server answered a JSON-RPC error
	CodeDirectoryNotFound    = "directory_not_found"   // 400 (resolve)
	CodeDirectoryNotAbsolute = "directory_not_absolute"
)

// Error is every non-2xx body.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Namespace/Tool name the object when the error is about one.
	Namespace string `json:"namespace,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// Suggestion is the nearest known name for unknown_namespace/unknown_tool.
	Suggestion string `json:"suggestion,omitempty"`
	// Stderr is the tail of a failed server's standard error.
	Stderr string `json:"stderr,omitempty"`
	// RetryAfter is set with code cooldown.
	RetryAfter *time.Time `json:"retryAfter,omitempty"`
}

// Health is GET /v1/health.
type Health struct {
	OK        bool   `json:"ok"`
	DaemonKey string `json:"daemonKey"`
	Pid       int    `json:"pid"`
	Version   string `json:"version"`
	// Binary is the daemon executable's identity (version.BinaryID).
	Binary string `json:"binary,omitempty"`
}

// HeaderBinary is the response header in which the daemon sends its
// executable's identity with every answer, so the CLI notices an upgrade
// without asking.
const HeaderBinary = "Mcpx-Binary"

// Namespace is one configured server as `ls` shows it.
type Namespace struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Transport   string `json:"transport"`
	Sharing     string `json:"sharing"`
	Scope       string `json:"scope"`
	ServerHash  string `json:"serverHash"`
	// Tools is the number of tools in the cached snapshot (after filters).
	Tools int `json:"tools"`
	// Live is the number of running instances.
	Live int `json:"live"`
	// State of the cached schema: "cached", "unread" (never fetched or no
	// usable snapshot), "error" (last fetch failed; Error says why).
	State     string     `json:"state"`
	Error     string     `json:"error,omitempty"`
	FetchedAt *time.Time `json:"fetchedAt,omitempty"`
}

// Schema states.
const (
	StateCached = "cached"
	StateUnread = "unread"
	StateError  = "error"
)

// NamespacesResponse is GET /v1/namespaces.
type NamespacesResponse struct {
	Namespaces []Namespace `json:"namespaces"`
}

// Tool is one tool. Definition is the tool object exactly as the server sent
// it in tools/list (lossless: top-level anyOf, description, $schema...).
type Tool struct {
	Namespace   string          `json:"namespace"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Definition  json.RawMessage `json:"definition"`
}

// ToolsResponse is GET /v1/tools?ns= and GET /v1/schema?ns=[&tool=].
type ToolsResponse struct {
	Namespace Namespace `json:"namespace"`
	Tools     []Tool    `json:"tools"`
}

// SearchHit is one search result.
type SearchHit struct {
	Tool
	Score float64 `json:"score"`
}

// SearchResponse is GET /v1/search?q=.
type SearchResponse struct {
	Query   string      `json:"query"`
	Results []SearchHit `json:"results"`
}

// CallRequest is POST /v1/call.
type CallRequest struct {
	Namespace string          `json:"namespace"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // a JSON object
	// Session is MCPX_SESSION_ID or --session (scope "session").
	Session string `json:"session,omitempty"`
	// Cwd is the caller's working directory (scope "cwd").
	Cwd string `json:"cwd,omitempty"`
	// Confirmed is the caller's explicit confirmation of a destructive call.
	Confirmed bool `json:"confirmed,omitempty"`
}

// Blob is binary tool output stored in the content-addressed cache.
type Blob struct {
	// Index is the position in the result's content array.
	Index    int    `json:"index"`
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	MimeType string `json:"mimeType,omitempty"`
	Size     int64  `json:"size"`
	// Name is a suggested file name (from a resource URI or the MIME type).
	Name string `json:"name,omitempty"`
}

// CallResponse is the answer to a call that reached the tool.
type CallResponse struct {
	// Result is the CallToolResult as the server sent it, except that
	// binary content moved to the cache carries "_mcpx": {"blob": index}
	// instead of its base64 data.
	Result  json.RawMessage `json:"result"`
	IsError bool            `json:"isError"`
	Blobs   []Blob          `json:"blobs,omitempty"`
}

// RefreshRequest is POST /v1/refresh; empty Namespace = all.
type RefreshRequest struct {
	Namespace string `json:"namespace,omitempty"`
}

// RefreshResponse lists the namespaces after the refetch.
type RefreshResponse struct {
	Namespaces []Namespace `json:"namespaces"`
}

// RestartRequest is POST /v1/restart; empty Namespace = all.
type RestartRequest struct {
	Namespace string `json:"namespace,omitempty"`
}

// RestartResponse counts the instances stopped.
type RestartResponse struct {
	Stopped int `json:"stopped"`
}

// Status is GET /v1/status.
type Status struct {
	DaemonKey  string      `json:"daemonKey"`
	SchemaHash string      `json:"schemaHash"`
	Pid        int         `json:"pid"`
	Manager    string      `json:"manager"`
	Configs    []string    `json:"configs"`
	Version    string      `json:"version"`
	StartedAt  time.Time   `json:"startedAt"`
	Servers    int         `json:"servers"`
	Live       int         `json:"live"`
	Calls      int64       `json:"calls"`
	Namespaces []Namespace `json:"namespaces"`
}

// Resolve is GET /v1/resolve?dir= and `mcpx resolve`.
type Resolve struct {
	Dir        string   `json:"dir"`
	DaemonKey  string   `json:"daemonKey"`
	Configs    []string `json:"configs"`
	Socket     string   `json:"socket"`
	Manager    string   `json:"manager"`
	State      string   `json:"state"`
	SchemaHash string   `json:"schemaHash,omitempty"`
}

// InfoFile is <runtime>/mcpx/<daemonKey>.json, written by a running daemon
// and removed on clean exit.
type InfoFile struct {
	DaemonKey  string    `json:"daemonKey"`
	SchemaHash string    `json:"schemaHash"`
	Socket     string    `json:"socket"`
	Pid        int       `json:"pid"`
	Manager    string    `json:"manager"`
	Configs    []string  `json:"configs"`
	Version    string    `json:"version"`
	StartedAt  time.Time `json:"startedAt"`
	// Binary is the daemon executable's identity (version.BinaryID).
	Binary string `json:"binary,omitempty"`
}

// KeyRecord is $XDG_STATE_HOME/mcpx/keys/<daemonKey>.json, written by the
// client before activation; the daemon reads its configs from it.
type KeyRecord struct {
	DaemonKey string    `json:"daemonKey"`
	Configs   []string  `json:"configs"`
	CreatedAt time.Time `json:"createdAt"`
}

// Headers.
const (
	// HeaderVersion carries the daemon's version on every response.
	HeaderVersion = "Mcpx-Version"
)
