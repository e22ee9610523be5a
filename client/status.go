package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Status is GET /v1/status. It activates the daemon when needed; callers
// that must not activate ask the service manager first.
func (c *Client) Status(ctx context.Context) (*api.Status, error) {
	var s api.Status
	if err := c.get(ctx, api.PathStatus, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
