package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// LoginRequiredError is a remote server that needs `mcpx login`: it has no
// token, or refreshing its token failed. Calls fail with it, never with a
// bare transport error.
type LoginRequiredError = auth.LoginRequiredError

// InsufficientScopeError is a request a remote server refused for want of
// an OAuth scope (403 insufficient_scope): `mcpx login` asks for it.
type InsufficientScopeError = auth.InsufficientScopeError

// ErrClosed is returned by Call and List after Close.
var ErrClosed = errors.New("upstream pools closed")

// StartError is a server that failed to start; Stderr is its tail.
type StartError struct {
	Server string
	Err    error
	Stderr string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("start server %s: %v%s", e.Server, e.Err, stderrSuffix(e.Stderr))
}

func (e *StartError) Unwrap() error { return e.Err }

// Summary is the message without the stderr tail (which Stderr carries),
// for answers that show the tail once, on its own.
func (e *StartError) Summary() string { return fmt.Sprintf("start server %s: %v", e.Server, e.Err) }

// CooldownError is a call refused because the last start failed recently.
type CooldownError struct {
	Server string
	Until  time.Time
	Last   *StartError
}

func (e *CooldownError) Error() string {
	msg := fmt.Sprintf("start server %s: cooling down until %s after a failed start", e.Server, e.Until.Format(time.RFC3339))
	if e.Last != nil {
		msg += ": " + e.Last.Error()
	}
	return msg
}

// Summary is the message without the stderr tail of the last start.
func (e *CooldownError) Summary() string {
	msg := fmt.Sprintf("start server %s: cooling down until %s after a failed start", e.Server, e.Until.Format(time.RFC3339))
	if e.Last != nil {
		msg += ": " + e.Last.Err.Error()
	}
	return msg
}

// Unwrap gives the failed start that caused the cooldown.
func (e *CooldownError) Unwrap() error {
	if e.Last == nil {
		return nil
	}
	return e.Last
}

// TimeoutError is a call cut off at callTimeout.
type TimeoutError struct {
	Server  string
	Tool    string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("call %s.%s: no result within callTimeout %s", e.Server, e.Tool, e.Timeout)
}

// RPCError is a JSON-RPC error the server returned.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("server error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// ExitError is a server whose connection ended while a request was in flight
// (a stdio process that exited or crashed, an HTTP server that went away).
// Stderr is the tail of a stdio server's stderr.
type ExitError struct {
	Server string
	Err    error
	Stderr string
	// NotResent, when set, says why the request was not sent again to a
	// fresh instance (exits.go).
	NotResent string
}

func (e *ExitError) Error() string {
	return e.Summary() + stderrSuffix(e.Stderr)
}

func (e *ExitError) Unwrap() error { return e.Err }

// Summary is the message without the stderr tail (which Stderr carries).
func (e *ExitError) Summary() string {
	msg := fmt.Sprintf("server %s went away: %v", e.Server, e.Err)
	if e.NotResent != "" {
		msg += "; " + e.NotResent
	}
	return msg
}

// stderrSuffix renders the last lines of a stderr tail for an error message;
// the full tail stays in the error's Stderr field.
func stderrSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	const maxLines = 20
	lines := strings.Split(s, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return "\nstderr:\n" + strings.Join(lines, "\n")
}
