package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Namespaces lists the configured servers from the daemon's schema cache
// (GET /v1/namespaces); it never starts a server.
func (c *Client) Namespaces(ctx context.Context) (*api.NamespacesResponse, error) {
	r := decoded[api.NamespacesResponse]{decode: api.DecodeNamespaces}
	if err := c.get(ctx, api.PathNamespaces, nil, &r); err != nil {
		return nil, err
	}
	return r.v, nil
}
