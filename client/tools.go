package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Tools lists one namespace's tools from the schema cache (GET /v1/tools).
func (c *Client) Tools(ctx context.Context, ns string) (*api.ToolsResponse, error) {
	var r api.ToolsResponse
	if err := c.get(ctx, api.PathTools, url.Values{"ns": {ns}}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ToolsBrief is the brief list of one namespace's tools (GET
// /v1/tools?brief=1): names and summaries, for listings.
func (c *Client) ToolsBrief(ctx context.Context, ns string) (*api.ToolRows, error) {
	var r toolRows
	if err := c.get(ctx, api.PathTools, url.Values{"ns": {ns}, "brief": {"1"}}, &r); err != nil {
		return nil, err
	}
	return r.ToolRows, nil
}

// toolRows decodes the brief list's application/x-ndjson rows.
type toolRows struct{ *api.ToolRows }

func (r *toolRows) decodeAnswer(data []byte) (err error) {
	r.ToolRows, err = api.DecodeToolRows(data)
	return err
}
