package daemon

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// POST /v1/complete refuses what is no completion before it reaches a
// server, and what the server refuses comes back as an error naming it.
func TestCompleteRoute(t *testing.T) {
	_, d, _ := startFixture(t)
	for _, bad := range []api.CompleteRequest{
		{Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`)},
		{Namespace: "fx"},
		{Namespace: "fx", Params: json.RawMessage(`[1]`)},
		{Namespace: "fx", Params: json.RawMessage(`{"argument":{"name":"a","value":""}}`)},
	} {
		if code, e := d.do(http.MethodPost, api.PathComplete, bad, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
			t.Errorf("%s: %d %+v", bad.Params, code, e)
		}
	}
	if code, e := d.do(http.MethodPost, api.PathComplete, api.CompleteRequest{Namespace: "fxx",
		Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`)}, nil); code != http.StatusNotFound {
		t.Errorf("unknown namespace: %d %+v", code, e)
	}
	// The fixture offers no completions: the server's refusal is the answer.
	if code, e := d.do(http.MethodPost, api.PathComplete, api.CompleteRequest{Namespace: "fx",
		Params: json.RawMessage(`{"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":""}}`)}, nil); code < 400 || e.Error == "" || e.Namespace != "fx" {
		t.Errorf("completion the server does not offer: %d %+v", code, e)
	}
}
