package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Schema returns the full definitions of a namespace's tools, or of one tool
// when tool is not empty (GET /v1/schema), from the schema cache.
func (c *Client) Schema(ctx context.Context, ns, tool string) (*api.ToolsResponse, error) {
	q := url.Values{"ns": {ns}}
	if tool != "" {
		q.Set("tool", tool)
	}
	r := decoded[api.ToolsResponse]{decode: api.DecodeTools}
	if err := c.get(ctx, api.PathSchema, q, &r); err != nil {
		return nil, err
	}
	return r.v, nil
}
