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
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/client/h1"
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

func (r *callAnswer) decodeAnswer(_ string, data []byte) (err error) {
	r.CallResponse, err = api.DecodeCallResponse(data)
	return err
}

// CallStream calls a tool asking for a streamed answer: onFrame receives
// each progress, log and status frame as the daemon sends it (on the
// caller's goroutine), and the call's result or error is returned as Call
// returns them. An error frame is an *APIError (its Status is 0: the
// answer's status was 200 when the call began). Elicitations are declined.
func (c *Client) CallStream(ctx context.Context, req api.CallRequest, onFrame func(api.StreamFrame)) (*api.CallResponse, error) {
	return c.CallStreamWith(ctx, req, StreamHooks{Frame: onFrame})
}

// StreamHooks hear a streamed call (CallStreamWith).
type StreamHooks struct {
	// Frame receives progress, log and status frames.
	Frame func(api.StreamFrame)
	// Elicit answers an elicitation (req.Elicit api.ElicitAsk): it
	// returns the ElicitResult, which the client sends with POST
	// /v1/elicit. It may block (a person is asked): the call's bound
	// stops meanwhile. Nil declines.
	Elicit func(ctx context.Context, e api.Elicitation) json.RawMessage
	// Request answers a server's other requests: sampling (req.Sample;
	// e.Method api.MethodSample) with a CreateMessageResult, roots
	// (req.Roots; api.MethodRoots) with a ListRootsResult; or an error the
	// server is given instead. Nil refuses them.
	Request func(ctx context.Context, e api.Elicitation) (json.RawMessage, error)
	// Late is told when an answer could not be delivered (the daemon
	// stopped waiting for it). May be nil.
	Late func(e api.Elicitation, err error)
}

// CallStreamWith is CallStream with every hook: a call whose server asks
// for input (elicitation) has it answered by h.Elicit while the stream
// waits.
func (c *Client) CallStreamWith(ctx context.Context, req api.CallRequest, h StreamHooks) (*api.CallResponse, error) {
	if req.Cwd == "" {
		req.Cwd = c.dir
	}
	req.Stream = true
	return c.stream(ctx, api.PathCall, req.Namespace, req, h)
}

// stream posts body, a request of server ns that asked for a streamed
// answer (a call, a read, a prompt), to path, and reads the answer as a
// call's: frames to h, the server's questions answered through h, the
// result frame's CallResponse returned. Bounded as a call of ns.
func (c *Client) stream(ctx context.Context, path, ns string, body any, h StreamHooks) (*api.CallResponse, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Questions asked together are answered at once, each on its own; they
	// end with the call (after its connection is released).
	b := &streamBound{bound: c.callBound(ns)}
	defer func() { cancel(); b.together.Wait() }()
	var timedOut atomic.Bool
	b.timer = time.AfterFunc(b.bound, func() { timedOut.Store(true); cancel() })
	defer b.timer.Stop()
	cn, resp, err := c.send(parent, withBound(ctx, b.bound), "POST", path, path, body)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { cn.Close() })
	defer c.release(cn, resp, stop)
	if r, plain, err := plainCallAnswer(path, resp); plain {
		return r, err
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
			case f.Elicit != nil:
				c.elicitFrame(ctx, *f.Elicit, h, b)
			case h.Frame != nil:
				h.Frame(f)
			}
		}
		if err != nil {
			switch {
			case parent.Err() != nil:
				return nil, fmt.Errorf("POST %s: %w", path, parent.Err())
			case timedOut.Load():
				return nil, fmt.Errorf("POST %s on %s: %w: no answer within %s", path, c.socket, ErrDaemonUnavailable, c.callBound(ns))
			case errors.Is(err, io.EOF):
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("POST %s: the answer ended before the result: %w: %w", path, ErrDaemonUnavailable, err)
		}
	}
}

// streamBound is a streamed call's bound, which stops while a person
// answers an elicitation, and for good once questions come together.
type streamBound struct {
	timer     *time.Timer
	bound     time.Duration // what is left of it
	unbounded bool          // stopped for good (questions asked together)
	together  sync.WaitGroup
}

// plainCallAnswer reads an answer to a streamed call that is not a stream:
// an error status, or the plain document of a daemon that does not stream.
// plain is false for a stream, which the caller reads.
func plainCallAnswer(path string, resp *h1.Response) (r *api.CallResponse, plain bool, err error) {
	if resp.Status < 200 || resp.Status > 299 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			return nil, true, fmt.Errorf("POST %s: read answer: %w: %w", path, ErrDaemonUnavailable, err)
		}
		return nil, true, apiError("POST", path, resp.Status, data)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header["content-type"]); mt != api.ContentTypeNDJSON {
		var r api.CallResponse
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, true, fmt.Errorf("POST %s: decode answer: %w", path, err)
		}
		return &r, true, nil
	}
	return nil, false, nil
}

// elicitFrame answers the question of an elicit frame through h, with the
// call's bound stopped meanwhile. Questions asked together (e.Of > 1)
// reach the caller all before it answers any (a relay's host, asked for
// the round whole), and the daemon bounds the wait from the first on.
func (c *Client) elicitFrame(ctx context.Context, e api.Elicitation, h StreamHooks, b *streamBound) {
	if e.Of > 1 || b.unbounded {
		if b.unbounded || b.timer.Stop() {
			b.unbounded = true
			if e.Of > 1 {
				b.together.Go(func() { c.answerElicitation(ctx, e, h) })
			} else {
				c.answerElicitation(ctx, e, h)
			}
		}
		return
	}
	if b.timer.Stop() {
		start := time.Now()
		c.answerElicitation(ctx, e, h)
		b.bound -= time.Since(start) // what was left when the frame came
		b.timer.Reset(max(b.bound, 0))
	}
}

// answerElicitation gets the answer to e from h (decline without a hook)
// and sends it to the daemon.
func (c *Client) answerElicitation(ctx context.Context, e api.Elicitation, h StreamHooks) {
	answer := api.ElicitAnswer{ID: e.ID, Result: api.ElicitResult(api.ActionDecline, nil)}
	switch {
	case e.Method != "" && h.Request != nil:
		res, err := h.Request(ctx, e)
		if answer.Result = res; err != nil {
			answer.Result, answer.Error = nil, err.Error()
		}
	case e.Method != "":
		answer.Result, answer.Error = nil, "the caller does not answer "+e.Method
	case h.Elicit != nil:
		answer.Result = h.Elicit(ctx, e)
	}
	if ctx.Err() != nil {
		return // the call is over: the daemon cancels the elicitation
	}
	if err := c.post(ctx, api.PathElicit, answer, nil); err != nil && h.Late != nil {
		h.Late(e, err)
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
