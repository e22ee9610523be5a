package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Shutdown asks the daemon to exit (POST /v1/shutdown). binary, when set, is
// the build (api.HeaderBinary) to replace: a daemon of another build does
// not stop. It does not activate a daemon that is not running: with nothing
// listening it returns an error wrapping ErrDaemonUnavailable.
func (c *Client) Shutdown(ctx context.Context, binary string) error {
	return c.post(context.WithValue(ctx, noActivate{}, true), api.PathShutdown, api.ShutdownRequest{Binary: binary}, nil)
}
