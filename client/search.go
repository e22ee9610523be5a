package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Search ranks tools by the words of q (GET /v1/search).
func (c *Client) Search(ctx context.Context, q string) (*api.SearchResponse, error) {
	var r api.SearchResponse
	if err := c.get(ctx, api.PathSearch, url.Values{"q": {q}}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
