// Package upstream connects to MCP servers through mcp-go (stdio, streamable
// HTTP, SSE) and keeps them in pools keyed by ServerHash, with sharing,
// scopes, limits, idle stop, start cooldown and call timeouts.
package upstream

// PENDING: declared signatures, implemented by the upstream helper (this
// file is then deleted). Callers code against exactly these.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Spec is everything needed to start one server.
type Spec struct {
	// Server is the definition with variables already expanded and
	// Options effective.
	Server *config.Server
	// Hash is the ServerHash of the unexpanded definition (pool key).
	Hash config.ServerHash
	// Env is the full process environment for stdio servers (captured
	// caller environment; Server.Env is added on top by upstream).
	Env []string
	// EnvDigest identifies the expanded values; an instance started with
	// another digest is replaced.
	EnvDigest string
	// ProtocolVersion is the version that worked last time ("" = probe).
	ProtocolVersion string
}

// Caller says which instance a call may use (scope).
type Caller struct {
	Session string // MCPX_SESSION_ID
	Cwd     string
}

// Listing is what a server lists, raw.
type Listing struct {
	ProtocolVersion string
	ServerInfo      json.RawMessage
	Instructions    string
	Tools           []json.RawMessage
	Prompts         []json.RawMessage
	Resources       []json.RawMessage
}

// Options configure the pool set.
type Options struct {
	// OnListChanged is called when a server sends
	// notifications/{tools,prompts,resources}/list_changed.
	OnListChanged func(h config.ServerHash, kind string)
	// Logf logs (may be nil).
	Logf func(format string, args ...any)
}

// Pools is every pool of a daemon. Safe for concurrent use.
type Pools struct{}

// New returns an empty pool set.
func New(opts Options) *Pools { panic("pending") }

// Call calls tool with args (a JSON object) on an instance chosen by scope,
// starting one if needed, bounded by callTimeout; ctx cancellation reaches
// the server as notifications/cancelled. It returns the raw CallToolResult.
func (p *Pools) Call(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage) (json.RawMessage, error) {
	panic("pending")
}

// List fetches tools/list (all pages), prompts/list and resources/list
// (when the server has them) as raw JSON, through a pooled instance.
func (p *Pools) List(ctx context.Context, spec Spec, caller Caller) (*Listing, error) {
	panic("pending")
}

// Live is the number of running instances for h.
func (p *Pools) Live(h config.ServerHash) int { panic("pending") }

// Restart stops h's instances (all when h is ""); returns how many.
func (p *Pools) Restart(ctx context.Context, h config.ServerHash) int { panic("pending") }

// Retain stops and forgets every pool whose hash is not in keep.
func (p *Pools) Retain(ctx context.Context, keep map[config.ServerHash]bool) { panic("pending") }

// Close stops everything (stdin close → SIGTERM → SIGKILL on the group).
func (p *Pools) Close(ctx context.Context) error { panic("pending") }

// StartError is a server that failed to start; Stderr is its tail.
type StartError struct {
	Server string
	Err    error
	Stderr string
}

func (e *StartError) Error() string { panic("pending") }
func (e *StartError) Unwrap() error { return e.Err }

// CooldownError is a call refused because the last start failed recently.
type CooldownError struct {
	Server string
	Until  time.Time
	Last   *StartError
}

func (e *CooldownError) Error() string { panic("pending") }

// TimeoutError is a call cut off at callTimeout.
type TimeoutError struct {
	Server  string
	Tool    string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string { panic("pending") }

// RPCError is a JSON-RPC error the server returned.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string { panic("pending") }
