package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Call calls a tool (POST /v1/call). A result with isError is a successful
// answer (resp.IsError); refusals by policy are *APIError with codes
// confirmation_required, policy_denied or annotations_unknown. Cwd defaults
// to the client's directory. The call is bounded by the server's
// startTimeout and callTimeout plus a margin (Options.CallMargin).
func (c *Client) Call(ctx context.Context, req api.CallRequest) (*api.CallResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	req.Stream = false
	var r callAnswer
	if err := c.post(withBound(ctx, c.callBound(req.Namespace)), api.PathCall, req, &r); err != nil {
		return nil, err
	}
	return r.CallResponse, nil
}

// callAnswer decodes a call's answer with api.DecodeCallResponse, without
// reflection (the result shares do's buffer, which nothing reuses).
type callAnswer struct{ *api.CallResponse }

func (r *callAnswer) decodeAnswer(data []byte) (err error) {
	r.CallResponse, err = api.DecodeCallResponse(data)
	return err
}

// CallStream calls a tool asking for a streamed answer: onFrame receives
// each progress, log and status frame as the daemon sends it (on the
// caller's goroutine), and the call's result or error is returned as Call
// returns them. An error frame is an *APIError (its Status is 0: the
// answer's status was 200 when the call began).
func (c *Client) CallStream(ctx context.Context, req api.CallRequest, onFrame func(api.StreamFrame)) (*api.CallResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	req.Stream = true
	const path = api.PathCall
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.callBound(req.Namespace))
	defer cancel()
	cn, resp, err := c.send(parent, ctx, "POST", path, path, req)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { cn.Close() })
	defer c.release(cn, resp, stop)
	if resp.Status < 200 || resp.Status > 299 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			return nil, fmt.Errorf("POST %s: read answer: %w: %w", path, ErrDaemonUnavailable, err)
		}
		return nil, apiError("POST", path, resp.Status, data)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header["content-type"]); mt != api.ContentTypeNDJSON {
		// A daemon that does not stream answers the plain document.
		var r api.CallResponse
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, fmt.Errorf("POST %s: decode answer: %w", path, err)
		}
		return &r, nil
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			if r, ok := resultFrame(line); ok {
				return r, nil
			}
			var f api.StreamFrame
			if jerr := json.Unmarshal(line, &f); jerr != nil {
				return nil, fmt.Errorf("POST %s: decode frame: %w", path, jerr)
			}
			switch {
			case f.Result != nil:
				return f.Result, nil
			case f.Error != nil:
				return nil, &APIError{Body: *f.Error}
			case onFrame != nil:
				onFrame(f)
			}
		}
		if err != nil {
			if parent.Err() != nil {
				return nil, fmt.Errorf("POST %s: %w", path, parent.Err())
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("POST %s: the answer ended before the result: %w: %w", path, ErrDaemonUnavailable, err)
		}
	}
}

// resultFrame decodes a result frame, {"result":CallResponse}, as the
// daemon writes it, with api.DecodeCallResponse instead of reflection (the
// result shares line's memory). ok is false for any other line, which the
// caller decodes in full.
func resultFrame(line []byte) (*api.CallResponse, bool) {
	const prefix = `{"result":`
	inner := bytes.TrimRight(line, "\r\n")
	if !bytes.HasPrefix(inner, []byte(prefix)) || len(inner) < len(prefix)+2 || inner[len(inner)-1] != '}' {
		return nil, false
	}
	r, err := api.DecodeCallResponse(inner[len(prefix) : len(inner)-1])
	return r, err == nil && r != nil
}
