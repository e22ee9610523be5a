package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Namespaces lists the configured servers from the daemon's schema cache
// (GET /v1/namespaces); it never starts a server.
func (c *Client) Namespaces(ctx context.Context) (*api.NamespacesResponse, error) {
	return c.namespaces(ctx, nil)
}

// NamespacesBrief is Namespaces with only what a listing shows (GET
// /v1/namespaces?brief=1): name, description, counts, state and error,
// and the source of an untrusted server; the rest is left zero.
func (c *Client) NamespacesBrief(ctx context.Context) (*api.NamespacesResponse, error) {
	return c.namespaces(ctx, url.Values{"brief": {"1"}})
}

func (c *Client) namespaces(ctx context.Context, query url.Values) (*api.NamespacesResponse, error) {
	r := decoded[api.NamespacesResponse]{decode: api.DecodeNamespaces}
	if err := c.get(ctx, api.PathNamespaces, query, &r); err != nil {
		return nil, err
	}
	return r.v, nil
}
