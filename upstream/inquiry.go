package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// What a server asks its client while a request runs: a 2025-11-25 server
// sends elicitation/create, sampling/createMessage or roots/list as
// requests of its own; a 2026-07-28 server answers the request with an
// input_required result listing them, and the client sends the request
// again with the answers (multi round-trip). Both reach the caller of the
// call the same way, as an Inquiry to its Answerer; roots are answered by
// the connection from the server's entry.

// Inquiry is one question a server asks during a call.
type Inquiry struct {
	// Method is elicitation/create, sampling/createMessage, or roots/list
	// (a 2026-07-28 server's input request, when Offer.Roots).
	Method string
	// Params are the request's params exactly as the server sent them.
	Params json.RawMessage
	// Key is the input request's key in a 2026-07-28 server's
	// input_required result ("" for a request of the server's own).
	Key string
	// Batch, for a relay (Offer set), lists the methods of every inquiry
	// of the round that goes to the answerer at once, this one included
	// (nil: asked alone): a relay can hand its host the round whole.
	Batch []string
}

// An Answerer answers a call's inquiries with the result to give the
// server (raw JSON: an ElicitResult, a CreateMessageResult), or an error.
// It may block (a person is asked); ctx ends when the call does. An error
// wrapping ErrNotOffered says mcpx does not offer what was asked.
type Answerer func(ctx context.Context, q Inquiry) (json.RawMessage, error)

// ErrNotOffered is an inquiry for something mcpx does not offer its servers
// (sampling; roots when the entry lists none).
var ErrNotOffered = errors.New("not offered")

// InquiryError is a call that could not go on because what its server
// asked could not be answered.
type InquiryError struct {
	Server string
	Method string
	Err    error
}

func (e *InquiryError) Error() string {
	return fmt.Sprintf("server %s asked for %s: %v", e.Server, e.Method, e.Err)
}

func (e *InquiryError) Unwrap() error { return e.Err }

// Hooks are what a call's caller hears and answers while it runs.
type Hooks struct {
	// Observe receives the server's progress and log notices (see
	// CallObserved); it is called from the transport's reader and must
	// not block.
	Observe func(Notice)
	// Answer answers the server's inquiries. Nil declines elicitations
	// and refuses sampling.
	Answer Answerer
	// LogLevel is the level of log messages asked of a 2026-07-28 server
	// for the call ("" = info; only asked when Observe is set).
	LogLevel string
	// Tool is the tool's definition as listed (nil when unknown): on a
	// 2026-07-28 HTTP connection its x-mcp-header parameters are mirrored
	// into Mcp-Param-* headers.
	Tool json.RawMessage
	// Offer, when set, is what a 2026-07-28 server is told the client
	// offers for this call instead of the connection's default: a relay's
	// host's own (roots still when the entry lists some).
	Offer *Offer
}

// Offer is what a call's caller can answer. With Roots, a 2026-07-28
// server's roots/list input requests go to the caller (Answer) instead of
// being answered from the entry's roots.
type Offer struct {
	Elicitation bool
	Sampling    bool
	Roots       bool
}

// Root is a directory offered to a server as a root (roots/list).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// rootsResult is the roots/list result offering roots (nil: none offered).
func rootsResult(roots []Root) json.RawMessage {
	if len(roots) == 0 {
		return nil
	}
	b, _ := json.Marshal(struct {
		Roots []Root `json:"roots"`
	}{roots})
	return b
}

// declined is the answer to an elicitation nobody can answer.
var declined = json.RawMessage(`{"action":"decline"}`)

// answer answers q with a (nil: nobody to ask), pausing the budget of
// budgetCtx while it waits.
func answer(ctx, budgetCtx context.Context, a Answerer, q Inquiry) (json.RawMessage, error) {
	if a == nil {
		switch q.Method {
		case string(mcp.MethodElicitationCreate):
			return declined, nil
		case string(mcp.MethodListRoots):
			return nil, fmt.Errorf("%w: nobody to ask for roots", ErrNotOffered)
		}
		return nil, fmt.Errorf("%w: mcpx does not sample from a language model for its servers", ErrNotOffered)
	}
	defer pauseBudget(budgetCtx)()
	return a(ctx, q)
}

// askerKey carries a call's answerer on its request context: mcp-go hands
// a request that a server sends on the HTTP stream of one of our requests
// that request's context.
type askerKey struct{}

type asker struct {
	answer Answerer
	ctx    context.Context // the call's (its budget)
}

// askers are the answerers of calls in flight per connection, oldest
// first: a 2025-11-25 server's request over stdio names no request it
// belongs to, so it goes to the oldest call on its connection that can
// answer. Safe for concurrent use.
type askers struct {
	mu     sync.Mutex
	byConn map[*conn][]*asker
}

// add registers a as answering on cn until the returned func is called.
func (as *askers) add(cn *conn, a *asker) func() {
	as.mu.Lock()
	if as.byConn == nil {
		as.byConn = map[*conn][]*asker{}
	}
	as.byConn[cn] = append(as.byConn[cn], a)
	as.mu.Unlock()
	return func() {
		as.mu.Lock()
		defer as.mu.Unlock()
		list := slices.DeleteFunc(as.byConn[cn], func(x *asker) bool { return x == a })
		if len(list) == 0 {
			delete(as.byConn, cn)
		} else {
			as.byConn[cn] = list
		}
	}
}

// oldest is the first call in flight on cn that answers (nil: none).
func (as *askers) oldest(cn *conn) *asker {
	as.mu.Lock()
	defer as.mu.Unlock()
	if l := as.byConn[cn]; len(l) > 0 {
		return l[0]
	}
	return nil
}

// serveRequest answers a request the server sends us (2025-11-25 and
// older): ping, roots/list from the entry, and inquiries through the
// connection's inquire (the answerer of the call they belong to).
func (cn *conn) serveRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	switch req.Method {
	case string(mcp.MethodPing):
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	case string(mcp.MethodListRoots):
		if cn.roots == nil {
			return rpcError(req.ID, mcp.METHOD_NOT_FOUND, "mcpx offers no roots to this server (list them in its entry's mcpx.roots)"), nil
		}
		return transport.NewJSONRPCResultResponse(req.ID, cn.roots), nil
	case string(mcp.MethodElicitationCreate), string(mcp.MethodSamplingCreateMessage):
		params, err := json.Marshal(req.Params)
		if err != nil {
			return rpcError(req.ID, mcp.INVALID_PARAMS, "unreadable params"), nil
		}
		q := Inquiry{Method: req.Method, Params: params}
		if cn.inquire == nil {
			res, err := answer(ctx, ctx, nil, q)
			return inquiryResponse(req.ID, res, err), nil
		}
		if cn.reply == nil {
			res, err := cn.inquire(ctx, cn, q)
			return inquiryResponse(req.ID, res, err), nil
		}
		// Over HTTP mcp-go ends ctx after 30 seconds, and sends the
		// answer with it: wait as long as the call does (its values,
		// the call's answerer, kept) and send the answer ourselves.
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() {
			select {
			case <-cn.stopped:
				cancel()
			case <-wctx.Done():
			}
		}()
		res, err := cn.inquire(wctx, cn, q)
		rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer rcancel()
		_ = cn.reply(rctx, inquiryResponse(req.ID, res, err))
		return nil, nil
	}
	return rpcError(req.ID, mcp.METHOD_NOT_FOUND, "mcpx does not handle "+req.Method), nil
}

func inquiryResponse(id mcp.RequestId, res json.RawMessage, err error) *transport.JSONRPCResponse {
	switch {
	case errors.Is(err, ErrNotOffered):
		return rpcError(id, mcp.METHOD_NOT_FOUND, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return rpcError(id, mcp.REQUEST_INTERRUPTED, "the caller is gone: "+err.Error())
	case err != nil:
		return rpcError(id, mcp.INTERNAL_ERROR, err.Error())
	}
	return transport.NewJSONRPCResultResponse(id, res)
}

func rpcError(id mcp.RequestId, code int, msg string) *transport.JSONRPCResponse {
	return transport.NewJSONRPCErrorResponse(id, code, msg, nil)
}

// inquire routes an inquiry a server sent as a request of its own on cn to
// the call it belongs to: the one whose HTTP request stream carried it,
// else the oldest call in flight on cn that answers. Without one,
// elicitations are declined and sampling refused.
func (p *Pools) inquire(ctx context.Context, cn *conn, q Inquiry) (json.RawMessage, error) {
	a, _ := ctx.Value(askerKey{}).(*asker)
	if a == nil {
		a = p.asks.oldest(cn)
	}
	if a == nil {
		return answer(ctx, ctx, nil, q)
	}
	// The answer is bounded by the transport's context and the call's.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(a.ctx, cancel)
	defer stop()
	return answer(actx, a.ctx, a.answer, q)
}

// maxInputRounds bounds how often one request is sent again with answers
// (a server that keeps asking), maxSheddingRounds how often a server may
// ask for a retry without asking anything (load shedding).
const (
	maxInputRounds    = 10
	maxSheddingRounds = 3
)

// inputRequired is the part of an input_required result mcpx reads.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  *string                    `json:"requestState"`
}

// needsInput reports whether raw is an input_required result, and decodes
// it. A result without the word skips the decode.
func needsInput(raw json.RawMessage) (*inputRequired, bool) {
	if !bytes.Contains(raw, []byte(`"input_required"`)) {
		return nil, false
	}
	var ir inputRequired
	if json.Unmarshal(raw, &ir) != nil || ir.ResultType != string(mcp.ResultTypeInputRequired) {
		return nil, false
	}
	return &ir, true
}

// rounds sends a request that a 2026-07-28 server may answer with
// input_required (tools/call, prompts/get, resources/read): send sends it
// with the extra top-level members given (none the first time), and while
// the result asks for input, the inquiries go to a and the request is sent
// again with the answers and the server's requestState (see roundOpts).
func (cn *conn) rounds(ctx context.Context, a Answerer, ro roundOpts, send func(extra map[string]json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	raw, err := send(nil)
	if !cn.modern {
		return raw, err // a 2025-11-25 server asks with requests of its own
	}
	shedding := 0
	for round := 0; err == nil; round++ {
		ir, ok := needsInput(raw)
		if !ok {
			return raw, nil
		}
		if round >= maxInputRounds {
			return nil, &InquiryError{Server: cn.server, Method: "input", Err: fmt.Errorf("the server asked for input %d times in a row", round)}
		}
		answers := map[string]json.RawMessage{}
		if len(ir.InputRequests) == 0 {
			// Load shedding: retry later, unchanged.
			if shedding++; shedding > maxSheddingRounds {
				return nil, &InquiryError{Server: cn.server, Method: "input", Err: errors.New("the server kept asking to retry later")}
			}
			t := time.NewTimer(time.Duration(shedding) * 250 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		// The entry's roots, and what nobody can answer, at once; the rest
		// to a: one at a time, in a stable order (a person may answer
		// them), or together for a relay (its host gets the round whole).
		var ask []Inquiry
		for _, id := range sortedKeys(ir.InputRequests) {
			var req struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(ir.InputRequests[id], &req); err != nil {
				return nil, &InquiryError{Server: cn.server, Method: "input", Err: fmt.Errorf("input request %q: %w", id, err)}
			}
			switch req.Method {
			case string(mcp.MethodListRoots):
				if ro.askRoots {
					ask = append(ask, Inquiry{Method: req.Method, Params: req.Params, Key: id})
				} else if answers[id] = cn.roots; cn.roots == nil {
					return nil, &InquiryError{Server: cn.server, Method: req.Method, Err: fmt.Errorf("%w: the entry lists no mcpx.roots", ErrNotOffered)}
				}
			case string(mcp.MethodElicitationCreate), string(mcp.MethodSamplingCreateMessage):
				ask = append(ask, Inquiry{Method: req.Method, Params: req.Params, Key: id})
			default:
				return nil, &InquiryError{Server: cn.server, Method: req.Method, Err: fmt.Errorf("%w: unknown request", ErrNotOffered)}
			}
		}
		if err := cn.answerAll(ctx, a, ask, ro.together, answers); err != nil {
			return nil, err
		}
		extra := map[string]json.RawMessage{}
		if len(answers) > 0 {
			extra["inputResponses"], _ = json.Marshal(answers)
		}
		if ir.RequestState != nil {
			extra["requestState"], _ = json.Marshal(*ir.RequestState)
		}
		raw, err = send(extra)
	}
	return nil, err
}

// roundOpts say how rounds answers: roots from a (askRoots) instead of the
// entry's; a round's inquiries to a all at once (together: a relay's host
// answers them in one round of its own) instead of one after another.
type roundOpts struct {
	askRoots, together bool
}

// answerAll puts the inquiries ask to a and stores the answers by key:
// one after another, or, together, all at once (each told the round's
// methods, Inquiry.Batch), the first failure ending the others.
func (cn *conn) answerAll(ctx context.Context, a Answerer, ask []Inquiry, together bool, answers map[string]json.RawMessage) error {
	if !together || len(ask) < 2 {
		for _, q := range ask {
			res, err := answer(ctx, ctx, a, q)
			if err != nil {
				return &InquiryError{Server: cn.server, Method: q.Method, Err: err}
			}
			answers[q.Key] = res
		}
		return nil
	}
	batch := make([]string, len(ask))
	for i, q := range ask {
		batch[i] = q.Method
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]json.RawMessage, len(ask))
	errs := make([]error, len(ask))
	var wg sync.WaitGroup
	for i, q := range ask {
		q.Batch = batch
		wg.Add(1)
		go func() {
			defer wg.Done()
			if results[i], errs[i] = answer(actx, ctx, a, q); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// The first failure, not the cancellations it caused.
	var first error
	for i, err := range errs {
		switch {
		case err == nil:
			answers[ask[i].Key] = results[i]
		case first == nil || (errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)):
			first = &InquiryError{Server: cn.server, Method: ask[i].Method, Err: err}
		}
	}
	return first
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// paramHeaders are the Mcp-Param-* headers of a tools/call of tool (its
// listed definition) with params, on a 2026-07-28 HTTP connection; nil
// when the tool declares none.
func paramHeaders(tool json.RawMessage, params json.RawMessage) http.Header {
	if !bytes.Contains(tool, []byte("x-mcp-header")) {
		return nil
	}
	var t mcp.Tool
	if json.Unmarshal(tool, &t) != nil {
		return nil
	}
	gen := mcp.GenerateParamHeaders(&t, params)
	if len(gen) == 0 {
		return nil
	}
	h := http.Header{}
	for k, v := range gen {
		h.Set(k, v)
	}
	return h
}

// withoutBadHeaderTools drops the tools whose x-mcp-header declarations
// break SEP-2243's rules (empty, not a primitive, repeated, bad
// characters): over streamable HTTP on 2026-07-28 a client must not offer
// them, since their calls cannot carry the headers the server checks.
func withoutBadHeaderTools(tools []json.RawMessage) []json.RawMessage {
	out := tools[:0:0]
	for _, raw := range tools {
		if bytes.Contains(raw, []byte("x-mcp-header")) {
			var t mcp.Tool
			if json.Unmarshal(raw, &t) == nil && mcp.ValidateParamHeaderAnnotations(&t) != nil {
				continue
			}
		}
		out = append(out, raw)
	}
	return out
}
