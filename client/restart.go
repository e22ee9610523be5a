package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Restart stops the running instances of ns, or of every namespace when ns
// is empty, so the next call starts fresh (POST /v1/restart).
func (c *Client) Restart(ctx context.Context, ns string) (*api.RestartResponse, error) {
	var r api.RestartResponse
	if err := c.post(ctx, api.PathRestart, api.RestartRequest{Namespace: ns}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
