package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Refresh refetches the schemas of ns, or of every namespace when ns is
// empty (POST /v1/refresh).
func (c *Client) Refresh(ctx context.Context, ns string) (*api.RefreshResponse, error) {
	var r api.RefreshResponse
	if err := c.post(ctx, api.PathRefresh, api.RefreshRequest{Namespace: ns}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
