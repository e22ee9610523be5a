package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// callFunc makes one call through the daemon.
type callFunc func(context.Context, api.CallRequest) (*api.CallResponse, error)

// withStepUp wraps call with OAuth step-up (the MCP authorization spec's
// scope challenge handling): when the server refuses the call for want of
// a scope the login lacks (insufficient_scope) and this machine can open a
// browser, mcpx logs in again asking for that scope with those held, as
// `mcpx login NS` would, and makes the call once more. At most once per
// command: a server that refuses again ends it with the error. Without a
// browser the error stands; it names the `mcpx login NS` that asks for
// the scope.
func (a *App) withStepUp(c *client.Client, call callFunc) callFunc {
	tried := false
	return func(ctx context.Context, req api.CallRequest) (*api.CallResponse, error) {
		resp, err := call(ctx, req)
		var ae *client.APIError
		if tried || !errors.As(err, &ae) || ae.Code() != api.CodeInsufficientScope || ae.Body.Scope == "" || !a.canOpenBrowser() {
			return resp, err
		}
		tried = true
		fmt.Fprintf(a.Stderr, "%s.%s needs a scope the login to %s lacks: logging in again, asking for %s.\n", req.Namespace, req.Tool, req.Namespace, ae.Body.Scope)
		st, lerr := a.login(ctx, c, req.Namespace, false, true)
		if errors.Is(lerr, context.Canceled) {
			return nil, lerr
		}
		if lerr != nil {
			return nil, &exitError{code: ExitUnavailable, kind: api.CodeInsufficientScope,
				msg: fmt.Sprintf("%s, and logging in again to ask for it failed: %s. Run `mcpx login %s` to try again.",
					strings.TrimSuffix(ae.Error(), "."), strings.TrimSuffix(lerr.Error(), "."), req.Namespace)}
		}
		fmt.Fprintf(a.Stderr, "logged in to %s%s\n", req.Namespace, describeLogin(*st))
		return call(ctx, req)
	}
}
