package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// generationSpecs are the fixture restricted to each generation, over
// stdio and over streamable HTTP (served in-process).
func generationSpecs(t *testing.T, env map[string]string) map[string]Spec {
	t.Helper()
	out := map[string]Spec{}
	for _, gen := range []string{fixture.GenerationModern, fixture.GenerationLegacy} {
		e := map[string]string{"FIXTURE_PROTOCOL": gen}
		for k, v := range env {
			e[k] = v
		}
		sp := fixtureSpec(t, config.Options{}, e)
		sp.Hash += config.ServerHash("-" + gen)
		sp.Server.Name += "-" + gen
		out[gen+"/stdio"] = sp
		srv := httptest.NewServer(fixture.HTTPHandler(fixture.FullWith(fixture.Options{Generation: gen})))
		t.Cleanup(srv.Close)
		out[gen+"/http"] = Spec{Server: &config.Server{Name: "net-" + gen, Transport: config.TransportHTTP, URL: srv.URL + "/mcp"},
			Hash: config.ServerHash("net-" + gen)}
	}
	return out
}

// recorder answers inquiries and keeps what it was asked.
type recorder struct {
	mu     sync.Mutex
	asked  []Inquiry
	answer json.RawMessage
	delay  time.Duration
}

func (r *recorder) Answer(ctx context.Context, q Inquiry) (json.RawMessage, error) {
	r.mu.Lock()
	r.asked = append(r.asked, q)
	r.mu.Unlock()
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if q.Method != "elicitation/create" {
		return nil, ErrNotOffered
	}
	return r.answer, nil
}

// A form elicitation reaches the call's answerer with the schema as the
// server sent it, and the answer reaches the tool: as an input_required
// round trip on 2026-07-28, as elicitation/create on 2025-11-25, over
// stdio and HTTP. The time the answer takes does not count against
// callTimeout.
func TestElicitationBothGenerations(t *testing.T) {
	for name, spec := range generationSpecs(t, nil) {
		t.Run(name, func(t *testing.T) {
			spec.Server.Options.CallTimeout = config.Duration(time.Second)
			p := newPools(t, Options{})
			r := &recorder{answer: json.RawMessage(`{"action":"accept","content":{"name":"Grace","age":85,"colour":"blue"}}`), delay: 1500 * time.Millisecond}
			raw, err := p.CallWith(context.Background(), spec, Caller{}, "ask_profile", nil, Hooks{Answer: r.Answer})
			if err != nil {
				t.Fatalf("ask_profile: %v", err)
			}
			if got := text(t, raw); got != `accept {"age":85,"colour":"blue","name":"Grace"}` {
				t.Errorf("ask_profile = %q", got)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.asked) != 1 || r.asked[0].Method != "elicitation/create" {
				t.Fatalf("asked %+v", r.asked)
			}
			var params struct {
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			}
			if err := json.Unmarshal(r.asked[0].Params, &params); err != nil || params.Message != "Tell the fixture about yourself" ||
				!strings.Contains(string(params.RequestedSchema), `"enumNames"`) {
				t.Errorf("params = %s (%v)", r.asked[0].Params, err)
			}
		})
	}
}

// Without an answerer an elicitation is declined; a URL elicitation goes
// to the answerer like a form.
func TestElicitationDeclinedAndURL(t *testing.T) {
	for name, spec := range generationSpecs(t, nil) {
		t.Run(name, func(t *testing.T) {
			p := newPools(t, Options{})
			if got := call(t, p, spec, Caller{}, "ask_profile", `{}`); got != "decline" {
				t.Errorf("unanswered ask_profile = %q, want decline", got)
			}
			r := &recorder{answer: json.RawMessage(`{"action":"accept"}`)}
			raw, err := p.CallWith(context.Background(), spec, Caller{}, "ask_url", nil, Hooks{Answer: r.Answer})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, raw); got != "accept" {
				t.Errorf("ask_url = %q", got)
			}
			if len(r.asked) != 1 || !strings.Contains(string(r.asked[0].Params), fixture.ElicitURL) {
				t.Errorf("asked %+v", r.asked)
			}
		})
	}
}

// Sampling is not offered: the call fails saying so (a 2026-07-28 server's
// input request cannot be answered; a 2025-11-25 server gets an error and
// fails the call itself). Roots are offered only when the entry lists
// some.
func TestSamplingRefusedRootsOffered(t *testing.T) {
	for name, spec := range generationSpecs(t, nil) {
		t.Run(name, func(t *testing.T) {
			p := newPools(t, Options{})
			r := &recorder{}
			raw, err := p.CallWith(context.Background(), spec, Caller{}, "ask_sample", nil, Hooks{Answer: r.Answer})
			if err == nil && !strings.Contains(string(raw), `"isError":true`) {
				t.Errorf("ask_sample answered %s", raw)
			}
			var ie *InquiryError
			if strings.HasPrefix(name, "modern") && (!errors.As(err, &ie) || ie.Method != "sampling/createMessage" || !errors.Is(err, ErrNotOffered)) {
				t.Errorf("modern ask_sample: %v, want an InquiryError for sampling", err)
			}

			_, err = p.Call(context.Background(), spec, Caller{}, "roots", nil)
			if err == nil {
				t.Errorf("roots without mcpx.roots succeeded")
			}
			spec.Roots = []Root{{URI: "file:///srv/project", Name: "project"}}
			if got := call(t, p, spec, Caller{}, "roots", `{}`); got != "file:///srv/project" {
				t.Errorf("roots = %q", got)
			}
		})
	}
}

// listening reports whether every running instance of h has its
// subscriptions/listen stream acknowledged.
func listening(p *Pools, h config.ServerHash) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl := p.pools[h]
	if pl == nil || len(pl.insts) == 0 {
		return false
	}
	for _, in := range pl.insts {
		if in.conn == nil || !in.conn.listening.Load() {
			return false
		}
	}
	return true
}

// On 2026-07-28 the essentials work as on 2025-11-25: a log line reaches
// the calls observing the connection, cancellation reaches the server, and
// list changes arrive through subscriptions/listen.
func TestModernEssentials(t *testing.T) {
	dir := t.TempDir()
	cancelLog, started := filepath.Join(dir, "cancel.log"), filepath.Join(dir, "started.log")
	specs := generationSpecs(t, map[string]string{fixture.CancelLogEnv: cancelLog, fixture.StartedLogEnv: started})
	for _, name := range []string{"modern/stdio", "modern/http"} {
		spec := specs[name]
		t.Run(name, func(t *testing.T) {
			got := make(chan string, 4)
			p := newPools(t, Options{OnListChanged: func(h config.ServerHash, kind string) {
				if h == spec.Hash {
					got <- kind
				}
			}})
			call(t, p, spec, Caller{}, "echo", `{"text":"start"}`)

			// A log line reaches a call observing the connection (mcp-go
			// may write a call's own notifications after its answer).
			ctx, cancel := context.WithCancel(context.Background())
			var h heard
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = p.CallObserved(ctx, spec, Caller{}, "slow", json.RawMessage(`{"seconds":60}`), h.observe)
			}()
			for !h.has("hello") && ctx.Err() == nil {
				call(t, p, spec, Caller{}, "log", `{"text":"hello"}`)
				select {
				case <-time.After(100 * time.Millisecond):
				case <-done:
					t.Fatal("slow ended early")
				}
			}
			cancel()
			<-done

			eventually(t, "subscriptions/listen to be acknowledged", func() bool { return listening(p, spec.Hash) })
			call(t, p, spec, Caller{}, "add_tool", `{"name":"fresh_`+strings.ReplaceAll(name, "/", "_")+`"}`)
			select {
			case kind := <-got:
				if kind != "tools" {
					t.Errorf("kind = %q", kind)
				}
			case <-time.After(10 * time.Second):
				t.Error("no list_changed through subscriptions/listen")
			}

			if name == "modern/stdio" {
				s := spec
				srv := *spec.Server
				srv.Options.CallTimeout = config.Duration(2 * time.Second)
				s.Server = &srv
				_, err := p.Call(context.Background(), s, Caller{}, "slow", json.RawMessage(`{"seconds":32}`))
				var te *TimeoutError
				if !errors.As(err, &te) {
					t.Fatalf("slow: %v, want a TimeoutError", err)
				}
				eventually(t, "the cancellation to reach the server", func() bool {
					b, _ := os.ReadFile(cancelLog)
					return strings.Contains(string(b), "cancelled 32")
				})
			}
		})
	}
}

// mcp-go gives a handler of a 2025-11-25 HTTP server's request 30 seconds
// and answers with that deadline; a person may take longer, so mcpx sends
// the answer itself.
func TestSlowAnswerOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("waits over 30 s")
	}
	spec := generationSpecs(t, nil)["legacy/http"]
	p := newPools(t, Options{})
	r := &recorder{answer: json.RawMessage(`{"action":"accept","content":{"name":"Late","age":1,"colour":"red"}}`), delay: 32 * time.Second}
	raw, err := p.CallWith(context.Background(), spec, Caller{}, "ask_profile", nil, Hooks{Answer: r.Answer})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, raw); got != `accept {"age":1,"colour":"red","name":"Late"}` {
		t.Errorf("ask_profile = %q", got)
	}
}
