// Package config finds, parses and merges mcpx configuration files and
// computes the three identities of DESIGN.md §3: DaemonKey, SchemaHash and
// ServerHash. It is shared by the CLI side and the daemon side, so it must not
// import anything from either.
package config

import (
	"encoding/json"
	"path/filepath"
	"time"
)

// DaemonKey names the daemon (and systemd unit instance) serving a set of
// config sources: 12 hex digits of SHA-256 over the symlink-resolved source
// paths, nearest first, NUL-separated. The built-in default is "builtin".
type DaemonKey string

// BuiltinKey is the daemon key used when no config file exists anywhere.
const BuiltinKey DaemonKey = "builtin"

// SchemaHash identifies the set of server definitions a daemon serves:
// 16 hex digits of SHA-256 over the canonical JSON of every definition.
type SchemaHash string

// ServerHash identifies one server definition as written (variables
// unexpanded): 16 hex digits. The schema cache and pools are keyed by it.
type ServerHash string

// Transport kinds.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Sharing modes.
const (
	SharingShared    = "shared"
	SharingExclusive = "exclusive"
)

// Scopes decide which server instance a caller gets.
const (
	ScopeGlobal  = "global"
	ScopeCwd     = "cwd"
	ScopeSession = "session"
	ScopeCall    = "call"
)

// Policy values (DESIGN.md §7).
const (
	PolicyConfirm = "confirm"
	PolicyAllow   = "allow"
	PolicyDeny    = "deny"
)

// Duration is a time.Duration that reads "30s"/"5m" strings or a number of
// seconds from JSON and writes the string form.
type Duration time.Duration

// Policy is the destructive-call policy, globally or for one server.
// Empty fields inherit.
type Policy struct {
	Destructive string `json:"destructive,omitempty"` // confirm | allow | deny
	Unannotated string `json:"unannotated,omitempty"` // allow | confirm
}

// Options is a server's `mcpx` block. After Load, each Server's Options hold
// the effective values: the server's own block over the top-level defaults
// over the built-in defaults.
type Options struct {
	Sharing      string   `json:"sharing,omitempty"`
	Scope        string   `json:"scope,omitempty"`
	Max          int      `json:"max,omitempty"`
	IdleTimeout  Duration `json:"idleTimeout,omitempty"`
	CallTimeout  Duration `json:"callTimeout,omitempty"`
	StartTimeout Duration `json:"startTimeout,omitempty"`
	// MaxMessageBytes bounds one JSON-RPC message from the server (0:
	// DefaultMaxMessageBytes); a larger one fails the call and the
	// instance is restarted.
	MaxMessageBytes int64    `json:"maxMessageBytes,omitempty"`
	Tools           []string `json:"tools,omitempty"`
	ExcludeTools    []string `json:"excludeTools,omitempty"`
	Description     string   `json:"description,omitempty"`
	Disabled        bool     `json:"disabled,omitempty"`
	Policy          Policy   `json:"policy,omitempty"`
	// Auth is the server's `mcpx.auth` block (remote servers that need an
	// OAuth login); nil when absent. Per server only.
	Auth *Auth `json:"auth,omitempty"`
	// Roots are the directories offered to the server as MCP roots, as
	// written (Server.RootDirs resolves them); none means mcpx declares
	// no roots. Per server only.
	Roots []string `json:"roots,omitempty"`
}

// Auth is a server's `mcpx.auth` block: how mcpx identifies itself to the
// authorization server of a remote server that needs a login (docs/auth.md).
// Every field is optional; without the block mcpx registers itself
// dynamically where the server allows it.
type Auth struct {
	// ClientID is a client registered by hand with the authorization
	// server (used when it offers neither client ID metadata documents nor
	// dynamic registration, or instead of them).
	ClientID string `json:"clientId,omitempty"`
	// ClientSecretEnv names the variable of the caller's environment that
	// holds ClientID's secret (a confidential client); the secret itself
	// is never written in a config file.
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing mcpx, used as the client_id where the authorization
	// server supports such documents.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// Scopes are requested at login (default: what the server's metadata
	// or its 401 challenge asks for).
	Scopes []string `json:"scopes,omitempty"`

	// ClientSecret is the value of ClientSecretEnv, set by Expand; never
	// encoded.
	ClientSecret string `json:"-"`
}

// Server is one configured MCP server.
type Server struct {
	Name      string            `json:"-"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Transport string            `json:"transport,omitempty"` // stdio | http | sse (set by Load)
	Headers   map[string]string `json:"headers,omitempty"`
	Options   Options           `json:"mcpx,omitempty"`

	// Source is the file that defined the server ("" for the built-in one).
	Source string `json:"-"`
	// Dir is the directory a stdio server starts in when its entry names
	// no cwd, and the base of a relative cwd: the project directory of the
	// file that defined it (the directory holding .mcpx.json or .mcp.json,
	// the parent of .vscode/, .cursor/, .gemini/, .codex/, .zed/, the
	// directory of opencode.json), the project of a Claude Code local
	// scope, or $HOME for a user-level file. Set by Load; "" for the
	// built-in server. Part of the server's identity (Hash).
	Dir string `json:"-"`
	// Raw is the entry exactly as written in Source; the hashes are
	// computed from it.
	Raw json.RawMessage `json:"-"`
	// Host is the MCP host whose file defined the server ("mcpx" for
	// mcpx's own format, "" for the built-in one).
	Host string `json:"-"`
	// Problem, when set, is why mcpx cannot use the entry (one sentence
	// without the server's name); the server is listed but never started.
	Problem string `json:"-"`
	// Untrusted, when set, is why the server may not start: its project
	// file is not trusted (one sentence naming `mcpx trust`).
	Untrusted string `json:"-"`
	// Self is set when the entry is mcpx itself (`mcpx serve`, or the URL
	// of this user's running `mcpx serve --http`); Problem says so, and
	// the server is listed as skipped, never started.
	Self bool `json:"-"`
	// Ignored are keys of the host's entry mcpx does not use.
	Ignored []string `json:"-"`

	// own is what the entry itself sets of Options (its mcpx block, or
	// the host's own keys mapped to it), without the defaults: what
	// EntryJSON writes.
	own optLayer
}

// CacheSettings bound the content-addressed store.
type CacheSettings struct {
	MaxBytes int64    `json:"maxBytes,omitempty"`
	MaxAge   Duration `json:"maxAge,omitempty"`
}

// Settings is the top-level `mcpx` block: daemon settings plus defaults for
// every server.
type Settings struct {
	IdleExit Duration      `json:"idleExit,omitempty"`
	Cache    CacheSettings `json:"cache,omitempty"`
	Policy   Policy        `json:"policy,omitempty"`
	// Defaults are the server options every server inherits.
	Defaults Options `json:"-"`
}

// Config is the merged result of every source.
type Config struct {
	// Sources are the symlink-resolved config files, nearest first. Empty
	// when the built-in default is in use.
	Sources []string
	// Builtin is true when no source exists and the built-in demo server
	// is the whole configuration.
	Builtin bool
	// Servers by name; disabled servers are removed.
	Servers map[string]*Server
	// Settings holds the effective daemon settings and server defaults.
	Settings Settings
	// Warnings are non-fatal findings (unknown server keys, ...), one
	// sentence each, naming file:line:col where known.
	Warnings []string
	// Files describes each source: its host, level and trust.
	Files []Source
	// Shadowed are the definitions a nearer one replaced.
	Shadowed []Shadow
	// Inputs are the VS Code input variables (${input:ID}) by ID.
	Inputs map[string]Input
	// Stamp is a digest of everything the configuration was loaded from:
	// every source's content and every trust verdict. Two loads with the
	// same stamp give the same configuration.
	Stamp string
}

// Source is one config file (Sources[i]) as Load found it.
type Source struct {
	Path  string `json:"path"`
	Host  string `json:"host"`
	Level string `json:"level"` // "project" or "user"
	// Trusted says whether servers from the file may start; Why says why
	// not.
	Trusted bool   `json:"trusted"`
	Why     string `json:"why,omitempty"`
	// Error is set when a host's file could not be read or parsed (its
	// servers are missing; mcpx's own files stop the load instead).
	Error string `json:"error,omitempty"`
}

// Shadow is a server definition replaced by a nearer one of the same name.
type Shadow struct {
	Name string `json:"name"`
	// Source is the file whose definition lost; By the one that won.
	Source string `json:"source"`
	By     string `json:"by"`
}

// Input is a VS Code input variable: mcpx asks for it on a terminal.
type Input struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Password    bool   `json:"password,omitempty"`
}

// Built-in defaults.
const (
	DefaultIdleTimeout  = 5 * time.Minute
	DefaultCallTimeout  = 120 * time.Second
	DefaultStartTimeout = 30 * time.Second
	// DefaultMaxMessageBytes bounds one message from a server.
	DefaultMaxMessageBytes = 64 << 20
	DefaultIdleExit        = 15 * time.Minute
	DefaultCacheBytes      = 1 << 30
	DefaultCacheAge        = 30 * 24 * time.Hour
)

// RootDirs are the entry's mcpx.roots as absolute, cleaned directories:
// relative ones are taken from rootBase.
func (s *Server) RootDirs() []string {
	if len(s.Options.Roots) == 0 {
		return nil
	}
	base := rootBase(s)
	out := make([]string, 0, len(s.Options.Roots))
	for _, r := range s.Options.Roots {
		if !filepath.IsAbs(r) {
			r = filepath.Join(base, r)
		}
		out = append(out, filepath.Clean(r))
	}
	return out
}

// rootBase is the directory relative mcpx.roots are resolved from: the
// entry's project directory (Dir), the base of a relative cwd too; for an
// entry without one, the directory of the file that defines it.
func rootBase(s *Server) string {
	if s.Dir != "" {
		return s.Dir
	}
	if s.Source == "" {
		return ""
	}
	return filepath.Dir(s.Source)
}
