package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Subscription is a resource subscription the daemon holds for this
// client until Close (POST /v1/subscribe): its connection stays open, and
// Next reads the updates as they come.
type Subscription struct {
	cancel context.CancelFunc
	cn     *conn
	rd     *bufio.Reader
}

// Subscribe asks the daemon to subscribe to req.URI of req.Namespace and
// returns once the server holds the subscription (bounded like a call:
// the server may have to start), or with why not (*APIError, e.g. code
// subscriptions_not_offered). Cwd defaults to the client's directory.
// ctx bounds making the subscription; once made, it lasts until Close.
func (c *Client) Subscribe(ctx context.Context, req api.SubscribeRequest) (*Subscription, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	const path = api.PathSubscribe
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, cancel) // until it is made
	defer unhook()
	bound := c.callBound(req.Namespace)
	var timedOut atomic.Bool
	timer := time.AfterFunc(bound, func() { timedOut.Store(true); cancel() })
	cn, resp, err := c.send(ctx, withBound(sctx, bound), "POST", path, path, req)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, err
	}
	context.AfterFunc(sctx, func() { cn.Close() })
	fail := func(err error) (*Subscription, error) {
		timer.Stop()
		cancel()
		return nil, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if rerr != nil {
			return fail(fmt.Errorf("POST %s: read answer: %w: %w", path, ErrDaemonUnavailable, rerr))
		}
		return fail(apiError("POST", path, resp.Status, data))
	}
	s := &Subscription{cancel: cancel, cn: cn, rd: bufio.NewReader(resp.Body)}
	f, err := s.frame()
	if !timer.Stop() && timedOut.Load() {
		return fail(fmt.Errorf("POST %s on %s: %w: no answer within %s", path, c.socket, ErrDaemonUnavailable, bound))
	}
	switch {
	case err != nil:
		return fail(err)
	case f.Error != nil:
		return fail(&APIError{Body: *f.Error})
	case f.Subscribed == nil:
		return fail(fmt.Errorf("POST %s: the daemon answered no subscription", path))
	}
	return s, nil
}

// Next waits for the next update and returns the URI the server says
// changed. An error ends the subscription: an *APIError when the daemon
// ended it (code shutting_down when the daemon stops, config_error when the
// server was redefined: subscribe again), else the connection's.
func (s *Subscription) Next() (string, error) {
	for {
		f, err := s.frame()
		switch {
		case err != nil:
			return "", err
		case f.Error != nil:
			return "", &APIError{Body: *f.Error}
		case f.Updated != nil:
			return f.Updated.URI, nil
		}
	}
}

// frame reads one frame.
func (s *Subscription) frame() (api.SubscribeFrame, error) {
	var f api.SubscribeFrame
	line, err := s.rd.ReadBytes('\n')
	if len(line) > 0 {
		if jerr := json.Unmarshal(line, &f); jerr != nil {
			return f, fmt.Errorf("POST %s: decode frame: %w", api.PathSubscribe, jerr)
		}
		return f, nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return f, fmt.Errorf("POST %s: the subscription's answer ended: %w: %w", api.PathSubscribe, ErrDaemonUnavailable, err)
}

// Close ends the subscription (the daemon releases it with the server once
// no other client holds it). Idempotent; a Next waiting returns.
func (s *Subscription) Close() {
	s.cancel()
}
