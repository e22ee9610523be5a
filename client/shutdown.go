package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Shutdown asks the daemon to exit (POST /v1/shutdown). It does not activate
// a daemon that is not running: with nothing listening it returns an error
// wrapping ErrDaemonUnavailable.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.post(context.WithValue(ctx, noActivate{}, true), api.PathShutdown, nil, nil)
}
