package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	waiting map[string]waiting
}

// waiting is one question waiting for its answer.
type waiting struct {
	method string // api.Elicitation's Method
	answer chan answered
}

// answered is a caller's answer: the result, or why it could not answer.
type answered struct {
	result json.RawMessage
	err    string
}

// open registers a new question of method and returns its id and the
// channel its answer arrives on; close forgets it.
func (p *pending) open(method string) (id string, answer chan answered, close func()) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	answer = make(chan answered, 1)
	p.mu.Lock()
	if p.waiting == nil {
		p.waiting = map[string]waiting{}
	}
	p.waiting[id] = waiting{method: method, answer: answer}
	p.mu.Unlock()
	return id, answer, func() {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
	}
}

// method is the Method of question id; false when it is not waiting.
func (p *pending) method(id string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.waiting[id]
	return w.method, ok
}

// answer delivers a to question id; false when it is not waiting.
func (p *pending) answer(id string, a answered) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.waiting[id]
	if !ok {
		return false
	}
	delete(p.waiting, id)
	w.answer <- a
	return true
}

// serveElicit answers POST /v1/elicit: the answer to an Elicitation frame.
func (d *daemon) serveElicit(w http.ResponseWriter, r *http.Request) error {
	var req api.ElicitAnswer
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	method, waiting := d.elicits.method(req.ID) // (one not waiting: 404 below)
	var err error
	switch {
	case req.Error != "" && (method != "" || !waiting):
	case req.Error != "":
		err = errors.New("an elicitation is not answered with an error (it is declined or cancelled)")
	default:
		err = api.CheckAnswer(method, req.Result)
	}
	if err != nil {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "elicitation %s: %v", req.ID, err)
	}
	if !d.elicits.answer(req.ID, answered{result: req.Result, err: req.Error}) {
		return apiErr(http.StatusNotFound, api.CodeNotFound, "no elicitation %s is waiting (answered, cancelled, or its call ended)", req.ID)
	}
	return writeJSON(w, struct{}{})
}

// answerer is who answers a call's inquiries for elicit mode (ask needs
// the call's stream) and what the caller answers itself through the stream
// besides elicitations (caller: sampling requests, roots).
func (d *daemon) answerer(ns, mode string, caller upstream.Offer, stream *frameStream) upstream.Answerer {
	// asks reports whether the caller is asked a question of method.
	asks := func(method string) bool {
		switch method {
		case api.MethodRoots:
			return caller.Roots && stream != nil
		case api.MethodSample:
			return caller.Sampling && stream != nil
		}
		return mode == api.ElicitAsk && stream != nil
	}
	return func(ctx context.Context, q upstream.Inquiry) (json.RawMessage, error) {
		of := 0
		for _, m := range q.Batch {
			if asks(m) {
				of++
			}
		}
		ask := func() (json.RawMessage, error) { return d.ask(ctx, ns, q, of, stream) }
		if q.Method == api.MethodRoots {
			if asks(q.Method) {
				return ask()
			}
			return nil, fmt.Errorf("%w: the caller lists no roots", upstream.ErrNotOffered)
		}
		if q.Method == api.MethodSample {
			if asks(q.Method) {
				return ask()
			}
			// mcpx offers no language model of its own to its servers.
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
				return ask()
			}
		case api.ElicitDefaults:
			return defaultAnswer(q.Params), nil
		}
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
}

// errNoAnswer is a sampling or roots request its caller did not answer
// (gone, or silent for elicitWait).
var errNoAnswer = errors.New("no answer")

// ask puts q to the caller through stream (one of of asked at once) and
// waits for the answer; a
// caller gone or silent for elicitWait cancels an elicitation and fails
// any other request.
func (d *daemon) ask(ctx context.Context, ns string, q upstream.Inquiry, of int, stream *frameStream) (json.RawMessage, error) {
	method := q.Method // "" for an elicitation, as the frame says it
	if method == "elicitation/create" {
		method = ""
	}
	id, answer, done := d.elicits.open(method)
	defer done()
	stream.send(api.StreamFrame{Elicit: &api.Elicitation{ID: id, Namespace: ns, Params: q.Params, Key: q.Key, Method: method, Of: of}}, true)
	t := time.NewTimer(elicitWait)
	defer t.Stop()
	var why error
	select {
	case a := <-answer:
		if a.err != "" {
			return nil, fmt.Errorf("the host could not answer: %s", a.err)
		}
		return a.result, nil
	case <-ctx.Done():
		why = ctx.Err()
	case <-t.C:
		d.log.Printf("%s: elicitation %s unanswered after %s; cancelled", ns, id, elicitWait)
		why = fmt.Errorf("%w within %s", errNoAnswer, elicitWait)
	}
	if method != "" {
		return nil, why
	}
	return api.ElicitResult(api.ActionCancel, nil), nil
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
