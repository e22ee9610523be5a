package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Health asks the daemon whether it serves (GET /v1/health).
func (c *Client) Health(ctx context.Context) (*api.Health, error) {
	var h api.Health
	if err := c.get(ctx, api.PathHealth, nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}
