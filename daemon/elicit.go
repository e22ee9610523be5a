package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Elicitation (api/elicit.go): what a server asks during a call reaches
// the call's answerer (upstream.Answerer), which the daemon builds from the
// request's elicit mode. With api.ElicitAsk the question goes out on the
// call's stream as an Elicitation frame and waits in pending until POST
// /v1/elicit answers it, the call ends (its caller went away), or
// elicitWait passes; the last two cancel it. Whoever reads the stream
// answers: `mcpx call` on a terminal, `mcpx serve` for its host.

// elicitWait bounds the wait for an answer.
var elicitWait = api.ElicitWait * time.Minute

// pending are the elicitations waiting for POST /v1/elicit, by id. Safe
// for concurrent use; the zero value is ready.
type pending struct {
	mu      sync.Mutex
	waiting map[string]chan json.RawMessage
}

// open registers a new elicitation and returns its id and the channel its
// answer arrives on; close forgets it.
func (p *pending) open() (id string, answer chan json.RawMessage, close func()) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	answer = make(chan json.RawMessage, 1)
	p.mu.Lock()
	if p.waiting == nil {
		p.waiting = map[string]chan json.RawMessage{}
	}
	p.waiting[id] = answer
	p.mu.Unlock()
	return id, answer, func() {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
	}
}

// answer delivers result to elicitation id; false when it is not waiting.
func (p *pending) answer(id string, result json.RawMessage) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.waiting[id]
	if !ok {
		return false
	}
	delete(p.waiting, id)
	ch <- result
	return true
}

// serveElicit answers POST /v1/elicit: the answer to an Elicitation frame.
func (d *daemon) serveElicit(w http.ResponseWriter, r *http.Request) error {
	var req api.ElicitAnswer
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	var res struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(req.Result, &res); err != nil {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicitation %s: the result is not an ElicitResult: %v", req.ID, err)
	}
	switch res.Action {
	case api.ActionAccept, api.ActionDecline, api.ActionCancel:
	default:
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicitation %s: action %q (accepted: accept, decline, cancel)", req.ID, res.Action)
	}
	if c := res.Content; len(c) > 0 && string(c) != "null" && c[0] != '{' {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicitation %s: the content must be an object", req.ID)
	}
	if !d.elicits.answer(req.ID, req.Result) {
		return apiErr(http.StatusNotFound, api.CodeNotFound, "no elicitation %s is waiting (answered, cancelled, or its call ended)", req.ID)
	}
	return writeJSON(w, struct{}{})
}

// answerer is who answers a call's inquiries for elicit mode (ask needs
// the call's stream).
func (d *daemon) answerer(ns, mode string, stream *frameStream) upstream.Answerer {
	return func(ctx context.Context, q upstream.Inquiry) (json.RawMessage, error) {
		if q.Method != "elicitation/create" {
			// Sampling: mcpx offers no language model to its servers.
			err := fmt.Errorf("%w: mcpx does not sample from a language model for its servers", upstream.ErrNotOffered)
			if stream != nil {
				stream.send(api.StreamFrame{Log: &api.LogMessage{Level: "warning", Logger: "mcpx",
					Data: jsonString(fmt.Sprintf("%s asked for %s, which mcpx refused: it does not sample from a language model for its servers", ns, q.Method))}}, true)
			}
			return nil, err
		}
		switch mode {
		case api.ElicitAsk:
			if stream != nil {
				return d.ask(ctx, ns, q, stream), nil
			}
		case api.ElicitDefaults:
			return defaultAnswer(q.Params), nil
		}
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
}

// ask puts q to the caller through stream and waits for the answer; a
// caller gone or silent for elicitWait cancels it.
func (d *daemon) ask(ctx context.Context, ns string, q upstream.Inquiry, stream *frameStream) json.RawMessage {
	id, answer, done := d.elicits.open()
	defer done()
	stream.send(api.StreamFrame{Elicit: &api.Elicitation{ID: id, Namespace: ns, Params: q.Params, Key: q.Key}}, true)
	t := time.NewTimer(elicitWait)
	defer t.Stop()
	select {
	case res := <-answer:
		return res
	case <-ctx.Done():
		return api.ElicitResult(api.ActionCancel, nil)
	case <-t.C:
		d.log.Printf("%s: elicitation %s unanswered after %s; cancelled", ns, id, elicitWait)
		return api.ElicitResult(api.ActionCancel, nil)
	}
}

// defaultAnswer accepts a form with its schema's defaults; a form that
// cannot be filled that way, or a URL, is declined.
func defaultAnswer(params json.RawMessage) json.RawMessage {
	var p api.ElicitParams
	if json.Unmarshal(params, &p) != nil || p.URLMode() {
		return api.ElicitResult(api.ActionDecline, nil)
	}
	fields, err := api.ElicitFields(p.RequestedSchema)
	if err != nil {
		return api.ElicitResult(api.ActionDecline, nil)
	}
	content, ok := api.ElicitDefaultContent(fields)
	if !ok {
		return api.ElicitResult(api.ActionDecline, nil)
	}
	return api.ElicitResult(api.ActionAccept, content)
}

// checkElicit refuses an elicit mode the request cannot use.
func checkElicit(mode string, stream bool) error {
	switch mode {
	case "", api.ElicitDecline, api.ElicitDefaults:
		return nil
	case api.ElicitAsk:
		if stream {
			return nil
		}
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicit %q needs a streamed answer (the question goes out on it)", mode)
	}
	return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicit %q (accepted: %v)", mode, api.ElicitModes)
}
