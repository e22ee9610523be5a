package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// What mcpx declares: sampling only to a 2025-11-25 session (shared by
// every caller) or to a 2026-07-28 server for a call whose caller samples;
// roots only when the entry lists some; nothing over HTTP+SSE.
func TestCapabilitiesDeclared(t *testing.T) {
	roots := rootsResult([]Root{{URI: "file:///data"}})
	for _, c := range []struct {
		name string
		caps json.RawMessage
		want string
	}{
		{"session", (&conn{}).capabilities(true), `{"elicitation":{"form":{},"url":{}},"sampling":{}}`},
		{"stateless", (&conn{}).capabilities(false), `{"elicitation":{"form":{},"url":{}}}`},
		{"session with roots", (&conn{roots: roots}).capabilities(true), `{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{}}`},
		{"sse", (&conn{sse: true, roots: roots}).capabilities(true), `{}`},
		{"a host that samples", (&conn{}).offered(Offer{Sampling: true}), `{"sampling":{}}`},
		{"a host that answers nothing", (&conn{roots: roots}).offered(Offer{}), `{"roots":{}}`},
		{"a host with roots", (&conn{}).offered(Offer{Elicitation: true, Roots: true}), `{"elicitation":{"form":{},"url":{}},"roots":{}}`},
	} {
		if !json.Valid(c.caps) || string(c.caps) != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.caps, c.want)
		}
	}
}

// A relay's round goes to the answerer at once, each inquiry told the
// round's methods; any other caller's one after another, alone. A
// failure ends the round with it, not with the cancellations it caused.
func TestAnswerAll(t *testing.T) {
	ask := []Inquiry{{Method: "elicitation/create", Key: "a"}, {Method: "sampling/createMessage", Key: "b"}}
	cn := &conn{server: "s"}
	arrived := make(chan Inquiry, 2)
	together := func(ctx context.Context, q Inquiry) (json.RawMessage, error) {
		arrived <- q
		if len(arrived) < 2 { // the other must come before any is answered
			for len(arrived) < 2 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
		}
		return json.RawMessage(`"` + q.Key + `"`), nil
	}
	answers := map[string]json.RawMessage{}
	if err := cn.answerAll(context.Background(), together, ask, true, answers); err != nil || string(answers["a"]) != `"a"` || string(answers["b"]) != `"b"` {
		t.Fatalf("together: %v %s", err, answers)
	}
	for range 2 {
		if q := <-arrived; len(q.Batch) != 2 {
			t.Errorf("%s was told the round %v", q.Key, q.Batch)
		}
	}
	var order []string
	alone := func(_ context.Context, q Inquiry) (json.RawMessage, error) {
		if q.Batch != nil {
			t.Errorf("%s asked alone was told %v", q.Key, q.Batch)
		}
		order = append(order, q.Key)
		return json.RawMessage(`{}`), nil
	}
	if err := cn.answerAll(context.Background(), alone, ask, false, map[string]json.RawMessage{}); err != nil || len(order) != 2 || order[0] != "a" {
		t.Errorf("alone: %v %v", err, order)
	}
	refused := errors.New("refused")
	failing := func(ctx context.Context, q Inquiry) (json.RawMessage, error) {
		if q.Key == "b" {
			return nil, refused
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	err := cn.answerAll(context.Background(), failing, ask, true, map[string]json.RawMessage{})
	var ie *InquiryError
	if !errors.Is(err, refused) || !errors.As(err, &ie) || ie.Method != "sampling/createMessage" {
		t.Errorf("a failure: %v", err)
	}
}
