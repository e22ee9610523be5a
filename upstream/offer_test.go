package upstream

import (
	"encoding/json"
	"testing"
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
