package client

import (
	"context"
	"net/url"

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

// NamespacesBrief is Namespaces with only what a listing shows (GET
// /v1/namespaces?brief=1, read from its rows): name, description, counts,
// state and error, and the source of an untrusted server; the rest is
// left zero.
func (c *Client) NamespacesBrief(ctx context.Context) (*api.NamespacesResponse, error) {
	var r namespaceRows
	if err := c.get(ctx, api.PathNamespaces, url.Values{"brief": {"1"}}, &r); err != nil {
		return nil, err
	}
	return r.NamespacesResponse, nil
}

// namespaceRows decodes the brief listing's rows, or the JSON document a
// daemon of an earlier build answered with (during an upgrade, the first
// command's answer comes from the daemon being replaced).
type namespaceRows struct{ *api.NamespacesResponse }

func (r *namespaceRows) decodeAnswer(contentType string, data []byte) (err error) {
	if contentType == api.ContentTypeNDJSON {
		r.NamespacesResponse, err = api.DecodeNamespaceRows(data)
	} else {
		r.NamespacesResponse, err = api.DecodeNamespaces(data)
	}
	return err
}
