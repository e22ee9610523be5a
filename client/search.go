package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Search ranks tools by the words of q (GET /v1/search), at most the
// daemon's default number of results.
func (c *Client) Search(ctx context.Context, q string) (*api.SearchResponse, error) {
	return c.SearchIn(ctx, q, "", 0, false)
}

// SearchIn ranks the tools of namespace ns (all when empty) by the words of
// q, at most limit results (0: the daemon's default, 10). brief asks for
// an answer that names only the first api.UnreadNamed namespaces never
// read and counts the rest (what `mcpx search` prints).
func (c *Client) SearchIn(ctx context.Context, q, ns string, limit int, brief bool) (*api.SearchResponse, error) {
	v := url.Values{"q": {q}}
	if brief {
		v.Set("brief", "1")
	}
	if ns != "" {
		v.Set("ns", ns)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	r := decoded[api.SearchResponse]{decode: api.DecodeSearch}
	if err := c.get(ctx, api.PathSearch, v, &r); err != nil {
		return nil, err
	}
	return r.v, nil
}
