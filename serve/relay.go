package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Elicitation relayed from a server to the host. When the host can answer
// (it declared the elicitation capability), serve asks the daemon to put
// the server's questions on the call's stream (api.ElicitAsk), whatever
// the server's generation (the daemon turns a 2026-07-28 server's
// input_required and a 2025-11-25 server's elicitation/create into the same
// Elicitation frame), and hands each to the host in the host's generation:
//
//   - a 2025-11-25 host gets elicitation/create on its session, and its
//     answer goes back to the daemon while the call waits;
//   - a 2026-07-28 host has no session to be asked on: its tools/call is
//     answered with an input_required result carrying the question and a
//     requestState naming the call, which stays parked here, running, until
//     the host sends the call again with the answer (inputResponses and the
//     requestState); then the call goes on, and the host gets the next
//     question or the result.
//
// A host that did not declare elicitation has the server's questions
// declined for it (the daemon's default).
//
// A server's sampling requests, and a 2026-07-28 server's requests for
// roots, go the same way to a host that declared sampling or roots
// (api.CallRequest Sample, Roots; the frame's Method says which); without
// them the daemon refuses sampling and answers roots from the entry. A
// 2026-07-28 server's round that asks several things reaches the host
// whole: the daemon says how many questions come together (Of).

// hostCaps is what the host of a request can answer, and whether the
// request is of the 2026-07-28 generation (the host is asked with
// input_required results).
type hostCaps struct {
	modern, elicits, samples, roots bool
}

// asks reports whether the host answers anything a server may ask.
func (h hostCaps) asks() bool { return h.elicits || h.samples || h.roots }

// hostAnswers reads what the host of ctx declared: in the request's _meta
// (2026-07-28) or at initialize (a 2025-11-25 session).
func hostAnswers(ctx context.Context) hostCaps {
	var caps mcp.ClientCapabilities
	info := server.RequestProtocolInfoFromContext(ctx)
	modern := info != nil && info.Modern
	switch cs, isInfo := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); {
	case modern && info.ClientCapabilities != nil:
		caps = *info.ClientCapabilities
	case !modern && isInfo:
		caps = cs.GetClientCapabilities()
	}
	return hostCaps{modern: modern, elicits: caps.Elicitation != nil, samples: caps.Sampling != nil, roots: caps.Roots != nil}
}

// askSession is the Elicit hook for a 2025-11-25 host: the question goes
// to the host as elicitation/create on its session; the host's answer is
// the result. A host that fails to answer has the question cancelled.
func (f *front) askSession(ctx context.Context, e api.Elicitation) json.RawMessage {
	p, err := elicitationParams(e.Params)
	if err == nil {
		var res *mcp.ElicitationResult
		if res, err = f.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: p}); err == nil {
			var b []byte
			if b, err = json.Marshal(res); err == nil {
				return b
			}
		}
	}
	f.s.opts.Log.Printf("%s asked the host for input, which failed: %v (cancelled)", e.Namespace, err)
	return api.ElicitResult(api.ActionCancel, nil)
}

// requestSession is the Request hook for a 2025-11-25 host: the server's
// sampling request goes to the host as sampling/createMessage on its
// session, a request for roots as roots/list; the host's result, or its
// error, goes back to the server.
func (f *front) requestSession(ctx context.Context, e api.Elicitation) (json.RawMessage, error) {
	var res any
	var err error
	switch e.Method {
	case api.MethodSample:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(e.Params, &p); err != nil {
			return nil, fmt.Errorf("read the sampling request of %s: %w", e.Namespace, err)
		}
		//lint:ignore SA1019 deprecated only from 2026-07-28; a 2025-11-25 host samples this way
		res, err = f.mcp.RequestSampling(ctx, mcp.CreateMessageRequest{
			Request: mcp.Request{Method: string(mcp.MethodSamplingCreateMessage)}, CreateMessageParams: p})
	case api.MethodRoots:
		res, err = f.mcp.RequestRoots(ctx, mcp.ListRootsRequest{Request: mcp.Request{Method: string(mcp.MethodListRoots)}})
	default:
		err = fmt.Errorf("serve relays no %s", e.Method)
	}
	if err != nil {
		f.s.opts.Log.Printf("%s asked the host for %s, which failed: %v", e.Namespace, e.Method, err)
		return nil, fmt.Errorf("%s: %w", e.Method, err)
	}
	return json.Marshal(res)
}

// elicitationParams reads an elicitation's params as the server sent them;
// the requested schema is kept as written (its properties in their order).
func elicitationParams(raw json.RawMessage) (mcp.ElicitationParams, error) {
	var p mcp.ElicitationParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("read the elicitation: %w", err)
	}
	var schema struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if json.Unmarshal(raw, &schema) == nil && len(schema.RequestedSchema) > 0 && string(schema.RequestedSchema) != "null" {
		p.RequestedSchema = schema.RequestedSchema
	}
	return p, nil
}

// ErrUnknownRequestState is a 2026-07-28 host's call whose requestState
// names no call serve holds: never given out, answered already, or expired.
var ErrUnknownRequestState = errors.New("unknown requestState")

// ErrBadInputResponse is a 2026-07-28 host's answer that is not the result
// of what it was asked (an elicitation, sampling or roots result). Like an
// unknown requestState, it is a protocol error (a JSON-RPC error), not the
// tool's.
var ErrBadInputResponse = errors.New("not an answer to the question asked")

// parkWait bounds how long a parked call waits for its host's answer (as
// the daemon bounds an elicitation's).
var parkWait = api.ElicitWait * time.Minute

// job is a request serve runs on the daemon for a 2026-07-28 host across
// rounds (a call, a prompt, a read): run runs it, the server's questions
// going to h; name says which it is, and the host's next round must name
// the same.
type job struct {
	name string
	run  func(ctx context.Context, h client.StreamHooks) (*api.CallResponse, error)
}

// parked is a request of a 2026-07-28 host waiting between rounds.
type parked struct {
	name   string        // the job's, which the host's next round must name
	asks   chan question // the call's questions, one at a time
	done   chan finished // its end (buffered: the call never blocks on it)
	cancel context.CancelFunc
	// fw forwards the call's progress and log frames to the host's
	// request of the current round; nil between rounds (the call then
	// waits for an answer and sends none) and once the host gave up.
	fw atomic.Pointer[forwarder]
	// Set when the call is parked, read when it resumes: the questions
	// the host was asked (a round of the server's, whole).
	held  []held
	timer *time.Timer
}

// held is a question the host was asked, under key in inputRequests.
type held struct {
	q   question
	key string
}

// question is one elicitation the call waits on: its answer goes on answer.
type question struct {
	e      api.Elicitation
	answer chan json.RawMessage
}

type finished struct {
	resp *api.CallResponse
	err  error
}

// parking holds the parked calls of one front by requestState. Safe for
// concurrent use; the zero value is ready.
type parking struct {
	mu    sync.Mutex
	calls map[string]*parked
}

// park puts p away under a new requestState, and cancels its call when no
// host resumes it within parkWait.
func (pk *parking) park(p *parked) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := "mcpx-" + hex.EncodeToString(b[:])
	pk.mu.Lock()
	defer pk.mu.Unlock()
	if pk.calls == nil {
		pk.calls = map[string]*parked{}
	}
	pk.calls[state] = p
	// (Set under the lock: take, which stops it, may run at once.)
	p.timer = time.AfterFunc(parkWait, func() {
		if q := pk.take(state); q != nil {
			q.cancel()
		}
	})
	return state
}

// take removes and returns the call parked under state (nil: none).
func (pk *parking) take(state string) *parked {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	p := pk.calls[state]
	if p == nil {
		return nil
	}
	delete(pk.calls, state)
	p.timer.Stop()
	return p
}

// closeAll cancels every parked call (serve is stopping).
func (pk *parking) closeAll() {
	pk.mu.Lock()
	calls := pk.calls
	pk.calls = nil
	pk.mu.Unlock()
	for _, p := range calls {
		p.timer.Stop()
		p.cancel()
	}
}

// rounds runs j (a call, a prompt, a read) for a 2026-07-28 host that
// can answer elicitations: it starts (detached from the host's request,
// which ends with the round) or, with a requestState, the parked job is
// resumed with the host's answers. It returns the job's end, or the
// input_required fields that ask the host its next questions: a server's
// round whole (the questions the daemon says come together,
// api.Elicitation.Of).
func (f *front) rounds(ctx context.Context, j job, fw *forwarder, mrt mcp.MultiRoundTripParams) (*api.CallResponse, *mcp.MultiRoundTripResult, error) {
	var p *parked
	var used []string // the keys of the answers given to p's questions
	if mrt.RequestState != "" {
		var again *mcp.MultiRoundTripResult
		var err error
		if p, used, again, err = f.resume(j.name, mrt); p == nil || again != nil || err != nil {
			return nil, again, err
		}
		p.fw.Store(fw)
	} else {
		p = startParked(ctx, j, fw)
	}
	// Answers the host sent that no question of this round asked for
	// are kept for the questions to come (a host may answer ahead, as to
	// a stateless server: the call's first request can carry them).
	given := map[string]mcp.InputResponse{}
	for k, v := range mrt.InputResponses {
		given[k] = v
	}
	for _, k := range used {
		delete(given, k)
	}
	p.held = nil
	return f.awaitRound(ctx, p, given)
}

// resume gives the parked job of mrt.RequestState (whose name must be
// name) the host's answers to its questions. It returns the job to follow
// with the keys of the answers used, or the input_required fields asking
// again what is still unanswered (again), or an error (an unknown state,
// a bad answer).
func (f *front) resume(name string, mrt mcp.MultiRoundTripParams) (p *parked, used []string, again *mcp.MultiRoundTripResult, err error) {
	if p = f.parked.take(mrt.RequestState); p != nil && p.name != name {
		p.cancel() // the state was sent with another request
		p = nil
	}
	if p == nil {
		return nil, nil, nil, fmt.Errorf("resume %s: %w (a requestState serves once, within %s)", name, ErrUnknownRequestState, parkWait)
	}
	var answered, missing []held
	for _, h := range p.held {
		if _, ok := mrt.InputResponses[h.key]; ok {
			answered = append(answered, h)
		} else {
			missing = append(missing, h)
		}
	}
	if len(answered) == 0 {
		// Not answered: asked again, under a new state.
		again, err := f.inputRequired(p)
		return p, nil, again, err
	}
	raws := make([]json.RawMessage, len(answered))
	for i, h := range answered {
		raw, err := json.Marshal(mrt.InputResponses[h.key])
		if err == nil {
			err = api.CheckAnswer(h.q.e.Method, raw)
		}
		if err != nil {
			p.cancel()
			return nil, nil, nil, fmt.Errorf("resume %s: inputResponses[%q]: %w: %w", name, h.key, ErrBadInputResponse, err)
		}
		raws[i] = raw
	}
	for i, h := range answered {
		h.q.answer <- raws[i]
		used = append(used, h.key)
	}
	if p.held = missing; len(missing) > 0 {
		// Answered in part: the rest asked again.
		again, err := f.inputRequired(p)
		return p, used, again, err
	}
	return p, used, nil, nil
}

// startParked starts j detached from the host's request (which ends with
// the round), its questions coming to the parked job's asks.
func startParked(ctx context.Context, j job, fw *forwarder) *parked {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &parked{name: j.name, asks: make(chan question), done: make(chan finished, 1), cancel: cancel}
	p.fw.Store(fw)
	hooks := client.StreamHooks{
		Frame: func(fr api.StreamFrame) {
			if fw := p.fw.Load(); fw != nil {
				fw.frame(fr)
			}
		},
		Elicit: func(ctx context.Context, e api.Elicitation) json.RawMessage {
			if a, err := p.ask(ctx, e); err == nil {
				return a
			}
			return api.ElicitResult(api.ActionCancel, nil)
		},
		Request: p.ask,
	}
	go func() {
		defer cancel()
		resp, err := j.run(cctx, hooks)
		p.done <- finished{resp, err}
	}()
	return p
}

// awaitRound follows the call p until it ends, or until the round of
// questions in progress is whole and some are not answered by given: the
// host is then asked them with an input_required result.
func (f *front) awaitRound(ctx context.Context, p *parked, given map[string]mcp.InputResponse) (*api.CallResponse, *mcp.MultiRoundTripResult, error) {
	need := 0 // questions of the round in progress still to come
	for {
		select {
		case q := <-p.asks:
			if need == 0 {
				need = max(q.e.Of, 1)
			}
			need--
			if a, ok := given[q.e.Key]; ok && q.e.Key != "" {
				delete(given, q.e.Key)
				raw, err := json.Marshal(a)
				if err == nil {
					err = api.CheckAnswer(q.e.Method, raw)
				}
				if err != nil {
					p.fw.Store(nil)
					p.cancel()
					return nil, nil, fmt.Errorf("%s: inputResponses[%q]: %w: %w", p.name, q.e.Key, ErrBadInputResponse, err)
				}
				q.answer <- raw
			} else {
				p.held = append(p.held, held{q: q})
			}
			if need == 0 && len(p.held) > 0 {
				// The round is whole: the host is asked it.
				p.fw.Store(nil)
				ask, err := f.inputRequired(p)
				return nil, ask, err
			}
		case d := <-p.done:
			return d.resp, nil, d.err
		case <-ctx.Done():
			// The host gave up the call: it ends before the round does,
			// so that no frame reaches the round's forwarder after it.
			p.cancel()
			<-p.done
			return nil, nil, ctx.Err()
		}
	}
}

// ask hands the call's question e to the round in progress (the host
// gets it with an input_required result) and waits for the answer the
// host sends with the call's next round; an error when the call ends
// first.
func (p *parked) ask(ctx context.Context, e api.Elicitation) (json.RawMessage, error) {
	q := question{e: e, answer: make(chan json.RawMessage, 1)}
	select {
	case p.asks <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inputRequired parks p and returns the input_required fields asking the
// host p's questions (an error ends p: a question that cannot be passed
// on).
func (f *front) inputRequired(p *parked) (*mcp.MultiRoundTripResult, error) {
	requests := mcp.InputRequests{}
	for i := range p.held {
		h := &p.held[i]
		e := h.q.e
		method, prefix := string(mcp.MethodElicitationCreate), "elicit-"
		switch e.Method {
		case api.MethodSample:
			method, prefix = api.MethodSample, "sample-"
		case api.MethodRoots:
			method, prefix = api.MethodRoots, "roots-"
		}
		// The server's own key where it gave one (a 2026-07-28 server),
		// so the host answers under the name the server chose.
		if h.key = e.Key; h.key == "" {
			h.key = prefix + e.ID
		}
		params := e.Params
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage("{}")
		}
		var ir mcp.InputRequest
		if err := json.Unmarshal(fmt.Appendf(nil, `{"method":%q,"params":%s}`, method, params), &ir); err != nil {
			p.cancel()
			return nil, fmt.Errorf("pass on the question of %s: %w", e.Namespace, err)
		}
		requests[h.key] = ir
	}
	state := f.parked.park(p)
	return &mcp.MultiRoundTripResult{InputRequests: requests, RequestState: state}, nil
}

// closeParked cancels the parked calls of every front.
func (s *mcpxServer) closeParked() {
	for _, f := range s.allFronts() {
		f.parked.closeAll()
	}
}

// streamed runs a host's prompts/get or resources/read of server ns (name
// says which) on the daemon as run does, streamed like a call, so that
// the server's questions meanwhile reach the host: a 2025-11-25 host on
// its session, a 2026-07-28 host with input_required rounds (ask, then
// mrt its answer). It sets in the request what the host answers (elicit,
// st). The result is the daemon's, or the host's next question.
func (f *front) streamed(ctx context.Context, ns, name string, elicit *string, st *api.Streamed, mrt mcp.MultiRoundTripParams,
	run func(ctx context.Context, h client.StreamHooks) (*api.CallResponse, error)) (*api.CallResponse, *mcp.MultiRoundTripResult, error) {
	fw := f.newForwarder(ctx, ns, nil)
	defer fw.flush()
	host := hostAnswers(ctx)
	rs, hooks := f.relayHooks(host, fw)
	*elicit = rs.elicit
	st.NoStatus, st.Sample, st.Roots, st.Relay = true, rs.sample, rs.roots, true
	if host.modern && host.asks() {
		return f.rounds(ctx, job{name, run}, fw, mrt)
	}
	resp, err := run(ctx, hooks)
	return resp, nil, err
}
