package api

import "time"

// The error document every mcpx command prints on stdout for a failure
// under --json (docs/cli.md, "Errors"): written by the CLI, and by `mcpx
// serve` (mcpxd) for a failure to start, which the CLI cannot wrap.

// CodeUsage is the error document's code for a command line that cannot
// be run as written (exit 2); the other codes are the daemon's (above)
// and the CLI's own.
const CodeUsage = "usage"

// ErrorDoc is what --json prints on stdout for a failure.
type ErrorDoc struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is one failure as a JSON document: a stable code (see
// docs/cli.md), the message, the exit code, and the details the daemon gave.
type ErrorBody struct {
	Code       string     `json:"code"`
	Message    string     `json:"message"`
	Exit       int        `json:"exit"`
	Hint       string     `json:"hint,omitempty"`
	Namespace  string     `json:"namespace,omitempty"`
	Tool       string     `json:"tool,omitempty"`
	Argument   string     `json:"argument,omitempty"`
	Suggestion string     `json:"suggestion,omitempty"`
	Problems   []string   `json:"problems,omitempty"`
	Stderr     string     `json:"stderr,omitempty"`
	RetryAfter *time.Time `json:"retryAfter,omitempty"`
	// Scope is what `mcpx login NS` asks for (insufficient_scope).
	Scope string `json:"scope,omitempty"`
}
