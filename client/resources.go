package client

import (
	"context"
	"net/url"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Resources lists resources and resource templates from the schema cache
// (GET /v1/resources), of one namespace or, with ns "", of every one. It
// never starts a server.
func (c *Client) Resources(ctx context.Context, ns string) (*api.ResourcesResponse, error) {
	var q url.Values
	if ns != "" {
		q = url.Values{"ns": {ns}}
	}
	var r api.ResourcesResponse
	if err := c.get(ctx, api.PathResources, q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Read reads one resource (POST /v1/read); binary contents come back as
// blobs in the store. Cwd defaults to the client's directory.
func (c *Client) Read(ctx context.Context, req api.ReadRequest) (*api.ReadResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	var r api.ReadResponse
	if err := c.post(ctx, api.PathRead, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Prompts lists prompts from the schema cache (GET /v1/prompts), of one
// namespace or, with ns "", of every one.
func (c *Client) Prompts(ctx context.Context, ns string) (*api.PromptsResponse, error) {
	var q url.Values
	if ns != "" {
		q = url.Values{"ns": {ns}}
	}
	var r api.PromptsResponse
	if err := c.get(ctx, api.PathPrompts, q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Prompt gets one prompt's messages (POST /v1/prompt).
func (c *Client) Prompt(ctx context.Context, req api.PromptRequest) (*api.PromptResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	var r api.PromptResponse
	if err := c.post(ctx, api.PathPrompt, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadStream reads a resource as Read does, asking for a streamed answer
// (POST /v1/read with Stream): what the server asks meanwhile goes to h,
// as during CallStreamWith, and its frames too. Bounded as a call.
func (c *Client) ReadStream(ctx context.Context, req api.ReadRequest, h StreamHooks) (*api.ReadResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	req.Stream = true
	r, err := c.stream(ctx, api.PathRead, req.Namespace, req, h)
	if err != nil {
		return nil, err
	}
	return &api.ReadResponse{Result: r.Result, Blobs: r.Blobs}, nil
}

// PromptStream gets a prompt as Prompt does, asking for a streamed answer
// (POST /v1/prompt with Stream), as ReadStream.
func (c *Client) PromptStream(ctx context.Context, req api.PromptRequest, h StreamHooks) (*api.PromptResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	req.Stream = true
	r, err := c.stream(ctx, api.PathPrompt, req.Namespace, req, h)
	if err != nil {
		return nil, err
	}
	return &api.PromptResponse{Result: r.Result}, nil
}
