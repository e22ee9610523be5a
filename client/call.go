package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Call calls a tool (POST /v1/call). A result with isError is a successful
// answer (resp.IsError); refusals by policy are *APIError with codes
// confirmation_required, policy_denied or annotations_unknown. Cwd defaults
// to the client's directory. The call is bounded by the server's
// startTimeout and callTimeout plus a margin (Options.CallMargin).
func (c *Client) Call(ctx context.Context, req api.CallRequest) (*api.CallResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	var r api.CallResponse
	if err := c.post(withBound(ctx, c.callBound(req.Namespace)), api.PathCall, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
