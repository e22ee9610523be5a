package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Tools lists one namespace's tools from the schema cache (GET /v1/tools).
func (c *Client) Tools(ctx context.Context, ns string) (*api.ToolsResponse, error) {
	r := decoded[api.ToolsResponse]{decode: api.DecodeTools}
	if err := c.get(ctx, api.PathTools, url.Values{"ns": {ns}}, &r); err != nil {
		return nil, err
	}
	return r.v, nil
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

// decoded is an answer read by one of api's readers of known shapes
// (api.DecodeNamespaces, ...) instead of encoding/json's reflection, which
// costs a process that reads one answer more than the reading. The value
// shares do's buffer, which nothing reuses.
type decoded[T any] struct {
	v      *T
	decode func([]byte) (*T, error)
}

func (d *decoded[T]) decodeAnswer(_ string, data []byte) (err error) {
	d.v, err = d.decode(data)
	return err
}

func (r *toolRows) decodeAnswer(_ string, data []byte) (err error) {
	r.ToolRows, err = api.DecodeToolRows(data)
	return err
}
