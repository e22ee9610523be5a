package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Complete asks a server for completions of an argument (POST
// /v1/complete).
func (c *Client) Complete(ctx context.Context, req api.CompleteRequest) (*api.CompleteResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	var r api.CompleteResponse
	if err := c.post(ctx, api.PathComplete, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
