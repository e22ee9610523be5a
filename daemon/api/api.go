// Package api holds the wire types of the daemon's HTTP API and their small
// encode/decode helpers, nothing else. Both binaries import it, so it
// imports nothing of mcpx (the files both sides read, the info file and the
// key record, are config's; which daemon serves a directory is package
// resolve's).
//
// Every JSON name here means one thing everywhere (DESIGN.md §3): daemonKey,
// schemaHash and serverHash are the three digests; configHash does not exist.
package api

import (
	"encoding/json"
	"strings"
	"time"
)

// Routes, all under /v1.
const (
	PathHealth     = "/v1/health"
	PathStatus     = "/v1/status"
	PathResolve    = "/v1/resolve"    // GET ?dir=ABS
	PathNamespaces = "/v1/namespaces" // GET
	PathTools      = "/v1/tools"      // GET ?ns=NS
	PathSearch     = "/v1/search"     // GET ?q=WORDS[&ns=NS][&limit=N]
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
	CodeUntrusted            = "untrusted_config"  // 403: the server's project file is not trusted (`mcpx trust`)
	CodeInvalidArguments     = "invalid_arguments" // 422: arguments the tool's input schema rejects
	CodeToolHidden           = "tool_hidden"       // 403: the server's tool filter in the config hides the tool
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
	// Argument names the argument an invalid_arguments error is about
	// (unknown, missing or of the wrong type); Suggestion is then the
	// nearest parameter name of an unknown one.
	Argument string `json:"argument,omitempty"`
	// Problems lists every violation of the input schema found
	// (invalid_arguments), each "at /path: what".
	Problems []string `json:"problems,omitempty"`
	// Scope is what `mcpx login NS` asks for (insufficient_scope).
	Scope string `json:"scope,omitempty"`
	// RPC is the JSON-RPC error behind a server_error: the one the server
	// answered with, or, when the server asked the caller for something
	// the call did not offer (sampling, roots, elicitation), the
	// MissingRequiredClientCapabilityError (-32021) a relay's host gets.
	// mcpx serve hands it to its host as that JSON-RPC error.
	RPC *RPCError `json:"rpc,omitempty"`
}

// RPCMissingCapability is the JSON-RPC code of a
// MissingRequiredClientCapabilityError (2026-07-28).
const RPCMissingCapability = -32021

// RPCError is a JSON-RPC error object as a server sent it.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
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
	// Source is the config file that defines the server ("" for the
	// built-in one).
	Source string `json:"source,omitempty"`
	// Tools is the number of tools in the cached snapshot (after filters).
	Tools int `json:"tools"`
	// Live is the number of running instances.
	Live int `json:"live"`
	// Replaced is how many of its instances were stopped as hung: they
	// did not answer after a call was cut short (timeout or cancel).
	Replaced int `json:"replaced"`
	// ExitsAfterAnswer: the server was seen exiting right after an
	// answer, so each call gets its own instance (as scope "call").
	ExitsAfterAnswer bool `json:"exitsAfterAnswer"`
	// State of the cached schema: "cached", "unread" (never fetched or no
	// usable snapshot), "error" (last fetch failed; Error says why, and
	// Stderr is the server's stderr tail, if it had one).
	State     string     `json:"state"`
	Error     string     `json:"error,omitempty"`
	Stderr    string     `json:"stderr,omitempty"`
	FetchedAt *time.Time `json:"fetchedAt,omitempty"`
}

// NamespaceRow is a Namespace of a brief listing (GET
// /v1/namespaces?brief=1): the same keys, every one but name and state
// left out when empty, and none of what a listing does not show (its hash,
// transport, sharing, scope and fetch time; its source unless untrusted).
// DecodeNamespaces reads it as a Namespace.
type NamespaceRow struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	Source           string `json:"source,omitempty"`
	Tools            int    `json:"tools,omitempty"`
	Live             int    `json:"live,omitempty"`
	Replaced         int    `json:"replaced,omitempty"`
	ExitsAfterAnswer bool   `json:"exitsAfterAnswer,omitempty"`
	State            string `json:"state"`
	Error            string `json:"error,omitempty"`
}

// NamespacesBrief is the answer of GET /v1/namespaces?brief=1.
type NamespacesBrief struct {
	Namespaces  []NamespaceRow      `json:"namespaces"`
	Unavailable []UnavailableSource `json:"unavailableSources,omitempty"`
}

// Schema states.
const (
	StateCached = "cached"
	StateUnread = "unread"
	StateError  = "error"
	// StateUntrusted: the server's project file is not trusted; Error says
	// which and how to trust it. The server is never started.
	StateUntrusted = "untrusted"
	// StateInvalid: mcpx cannot use the entry as written; Error says why.
	StateInvalid = "invalid"
	// StateSkipped: the entry is mcpx itself (`mcpx serve`), which mcpx
	// never serves; Error says which. It is never started.
	StateSkipped = "skipped"
)

// NamespacesResponse is GET /v1/namespaces.
type NamespacesResponse struct {
	Namespaces []Namespace `json:"namespaces"`
	// Unavailable are the config sources that could not be read or
	// parsed (or belong to another user): their servers are missing.
	Unavailable []UnavailableSource `json:"unavailableSources,omitempty"`
}

// UnavailableSource is a config file whose servers are not available.
type UnavailableSource struct {
	Path string `json:"path"`
	Host string `json:"host"`
	// Error says why, with FILE:LINE:COL for a file that does not parse.
	Error string `json:"error"`
}

// Sentence is the source's problem as one line ending in "its servers
// are not available", naming the file.
func (u UnavailableSource) Sentence() string {
	msg := strings.TrimSuffix(FirstLine(u.Error), ".")
	if file, _, _ := strings.Cut(u.Path, "#"); !strings.Contains(msg, file) {
		msg = u.Path + ": " + msg
	}
	return msg + "; its servers are not available"
}

// Tool is one tool. Definition is the tool object exactly as the server sent
// it in tools/list (lossless: top-level anyOf, description, $schema...).
type Tool struct {
	Namespace   string          `json:"namespace"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Definition is absent in search results (they name tools; `mcpx
	// schema` has the rest).
	Definition json.RawMessage `json:"definition,omitempty"`
}

// ToolsResponse is GET /v1/tools?ns= and GET /v1/schema?ns=[&tool=].
type ToolsResponse struct {
	Namespace Namespace `json:"namespace"`
	Tools     []Tool    `json:"tools"`
}

// SearchHit is one search result: the tool (without its definition), its
// score, and why it ranked there.
type SearchHit struct {
	Tool
	Score float64       `json:"score"`
	Why   []SearchMatch `json:"why,omitempty"`
}

// SearchMatch is one word of the query a hit matched: the word (or phrase)
// as the query wrote it, lower-cased; the thesaurus entry or kind of value
// it matched through, when not the word itself ("ticket" via "issue",
// "notes.md" via "file"); and the fields of the tool that have it: "name",
// "title", "description", "parameter", "parameter description", "enum
// value", "server instructions", "server name".
type SearchMatch struct {
	Word   string   `json:"word"`
	Via    string   `json:"via,omitempty"`
	Fields []string `json:"fields"`
}

// SearchResponse is GET /v1/search?q=WORDS[&ns=NS][&limit=N]: at most
// limit hits (default 10), best first. Unread lists the namespaces searched
// whose tools have never been read (search never starts a server; `mcpx
// refresh` reads them).
type SearchResponse struct {
	Query   string      `json:"query"`
	Results []SearchHit `json:"results"`
	Unread  []string    `json:"unread,omitempty"`
	// UnreadMore is how many namespaces never read a brief answer
	// (?brief=1) leaves out of Unread, which then names the first few.
	UnreadMore int `json:"unreadMore,omitempty"`
	// Untrusted is how many namespaces were not searched because their
	// project file is not trusted (`mcpx trust`); they are not in Unread.
	Untrusted int `json:"untrusted,omitempty"`
}

// UnreadNamed is how many namespaces never read a brief search answer
// names (SearchResponse.UnreadMore counts the rest).
const UnreadNamed = 3

// CallRequest is POST /v1/call.
//
// Arguments travel raw: a whole JSON object (Arguments), and/or key=value
// pairs (Pairs) that the daemon types against the tool's cached input schema
// and sets over Arguments, in order. A key given more than once builds an
// array where the schema says array. Unless NoValidate, the result is
// checked against the input schema before the tool is called.
type CallRequest struct {
	Namespace string          `json:"namespace"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // a JSON object
	Pairs     []ArgPair       `json:"pairs,omitempty"`
	// NoValidate sends the arguments as given (pairs still typed where the
	// schema says how) without checking them against the input schema.
	NoValidate bool `json:"noValidate,omitempty"`
	// Raw asks for the result exactly as the server sent it: binary
	// content is still stored (Blobs) but stays inline in Result.
	Raw bool `json:"raw,omitempty"`
	// Stream asks for an application/x-ndjson answer: StreamFrame lines
	// while the call runs (progress, log, status), ending with exactly one
	// frame carrying the result or the error. Failures before the call
	// starts (unknown tool, invalid arguments, policy) are plain error
	// answers with their HTTP status, as without Stream.
	Stream bool `json:"stream,omitempty"`
	// NoStatus leaves the status frames out of a streamed answer, for a
	// caller that shows none (mcpx serve): a call during which the server
	// sends nothing is then answered in one piece, the result frame alone.
	NoStatus bool `json:"noStatus,omitempty"`
	// Session is MCPX_SESSION_ID or --session (scope "session").
	Session string `json:"session,omitempty"`
	// Cwd is the caller's working directory (scope "cwd").
	Cwd string `json:"cwd,omitempty"`
	// Confirmed is the caller's explicit confirmation of a destructive call.
	Confirmed bool `json:"confirmed,omitempty"`
	// Task runs a tool whose taskSupport is "optional" as a task ("required"
	// ones always are). Detach answers as soon as the task exists, with
	// CallResponse.Task set and no result; the daemon keeps following it.
	Task   bool `json:"task,omitempty"`
	Detach bool `json:"detach,omitempty"`
	// Elicit says who answers the server's elicitations: ElicitAsk (the
	// caller, through the stream: needs Stream), ElicitDefaults, or
	// ElicitDecline ("" is ElicitDecline). See elicit.go.
	Elicit string `json:"elicit,omitempty"`
	// Sample: the caller answers the server's sampling requests
	// (sampling/createMessage) through the stream, as Elicitation frames
	// whose Method says so (needs Stream). Without it they are refused:
	// mcpx has no language model of its own.
	Sample bool `json:"sample,omitempty"`
	// Roots: the caller answers a 2026-07-28 server's roots/list input
	// requests through the stream the same way (Method MethodRoots; a
	// relay's host's roots) instead of the daemon answering them from the
	// entry's mcpx.roots. A 2025-11-25 server's session keeps the entry's
	// (it is shared by every caller). Needs Stream.
	Roots bool `json:"roots,omitempty"`
	// Relay: the caller relays the call for a host (serve) and Elicit and
	// Sample and Roots say what that host answers. A 2026-07-28 server is
	// told only that (and roots when the entry lists some) as the call's
	// client capabilities, so that it asks nothing the host cannot give.
	Relay bool `json:"relay,omitempty"`
}

// ArgPair is one key=value (JSON false) or key:=JSON (JSON true) argument
// of a call, as the user wrote it; the CLI has already replaced key=@FILE by
// the file's contents.
type ArgPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	JSON  bool   `json:"json,omitempty"`
}

// ContentTypeNDJSON is the media type of a streamed call answer.
const ContentTypeNDJSON = "application/x-ndjson"

// StreamFrame is one line of a streamed call answer: exactly one field is
// set.
type StreamFrame struct {
	Progress *Progress     `json:"progress,omitempty"`
	Elicit   *Elicitation  `json:"elicit,omitempty"`
	Log      *LogMessage   `json:"log,omitempty"`
	Status   *CallStatus   `json:"status,omitempty"`
	Result   *CallResponse `json:"result,omitempty"`
	Error    *Error        `json:"error,omitempty"`
}

// Progress is a notifications/progress the server sent for the call.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"` // 0: unknown
	Message  string  `json:"message,omitempty"`
}

// LogMessage is a notifications/message (log line) the server sent while
// the call ran.
type LogMessage struct {
	Level  string          `json:"level,omitempty"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// CallStatus says where the call is: State "starting" when no instance of
// the server runs yet (the call waits for one to start), "calling" once
// the request went to the server.
type CallStatus struct {
	State     string `json:"state"`
	Namespace string `json:"namespace,omitempty"`
}

// Call states.
const (
	CallStarting = "starting"
	CallCalling  = "calling"
)

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
	// Task is set when the call ran as a task (without Result when the
	// call was detached).
	Task *Task `json:"task,omitempty"`
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

// ShutdownRequest is POST /v1/shutdown. Binary, when set, is the build
// (HeaderBinary) the client wants replaced: a daemon of another build (the
// one that already replaced it) answers without stopping.
type ShutdownRequest struct {
	Binary string `json:"binary,omitempty"`
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

// Daemon states in Resolve.State (and `mcpx daemons`), learned from the
// info file and kill(pid, 0), never by connecting to a socket.
const (
	// DaemonRunning: an info file whose process is alive.
	DaemonRunning = "running"
	// DaemonStale: an info file whose process is gone (a crash).
	DaemonStale = "stale"
	// DaemonStopped: no info file. Under systemd or launchd the socket may
	// still be held by the manager; connecting to it starts the daemon.
	DaemonStopped = "stopped"
)

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

// Headers.
const (
	// HeaderVersion carries the daemon's version on every response.
	HeaderVersion = "Mcpx-Version"
	// HeaderConfigStamp carries, on every request, the config.Config.Stamp
	// of the configuration the client loaded; a daemon holding another
	// one reloads before answering, so an edit applies on the next command.
	HeaderConfigStamp = "Mcpx-Config-Stamp"
	// HeaderEnvDigest carries, on every request, the config.EnvDigest of
	// the environment the client captured and wrote to the key's
	// environment file; a daemon holding values of another digest reads
	// the file again (without it, the daemon stats the file).
	HeaderEnvDigest = "Mcpx-Env-Digest"
)
