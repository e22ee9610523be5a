package client

import (
	"context"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Login starts an OAuth login to ns (POST /v1/login): the daemon discovers
// the server's authorization server and listens for the redirect. Open the
// returned URL, then call LoginWait.
func (c *Client) Login(ctx context.Context, ns string, device bool) (*api.LoginStart, error) {
	var r api.LoginStart
	if err := c.post(ctx, api.PathLogin, api.LoginRequest{Namespace: ns, Device: device}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// LoginWait blocks until the login id finishes (POST /v1/login/wait).
// Ending ctx abandons the login.
func (c *Client) LoginWait(ctx context.Context, id string) (*api.AuthStatus, error) {
	var r api.AuthStatus
	if err := c.post(ctx, api.PathLoginWait, api.LoginWaitRequest{ID: id}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Logout revokes (where the server offers it) and forgets ns's tokens (POST
// /v1/logout).
func (c *Client) Logout(ctx context.Context, ns string) (*api.LogoutResponse, error) {
	var r api.LogoutResponse
	if err := c.post(ctx, api.PathLogout, api.LogoutRequest{Namespace: ns}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Auth lists the login state of every remote server (GET /v1/auth).
func (c *Client) Auth(ctx context.Context) (*api.AuthResponse, error) {
	var r api.AuthResponse
	if err := c.get(ctx, api.PathAuth, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
