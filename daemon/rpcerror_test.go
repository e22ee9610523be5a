package daemon

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// A server's JSON-RPC error travels in the answer whole (a relay hands it
// to its host), and a server that asked for what the caller did not offer
// is a MissingRequiredClientCapabilityError naming the capability.
func TestServerErrorsCarryTheirJSONRPCError(t *testing.T) {
	e := mapError(fmt.Errorf("read: %w", &upstream.RPCError{Code: -32602, Message: "Resource not found", Data: json.RawMessage(`{"uri":"a://b"}`)}))
	if e.body.Code != api.CodeServerError || e.body.RPC == nil || e.body.RPC.Code != -32602 || string(e.body.RPC.Data) != `{"uri":"a://b"}` {
		t.Errorf("RPCError: %+v %+v", e.body, e.body.RPC)
	}
	for method, capability := range map[string]string{api.MethodSample: "sampling", api.MethodRoots: "roots", "elicitation/create": "elicitation"} {
		e = mapError(&upstream.InquiryError{Server: "s", Method: method, Err: fmt.Errorf("%w: no", upstream.ErrNotOffered)})
		want := fmt.Sprintf(`{"requiredCapabilities":{%q:{}}}`, capability)
		if e.body.Code != api.CodeServerError || e.body.RPC == nil || e.body.RPC.Code != api.RPCMissingCapability || string(e.body.RPC.Data) != want {
			t.Errorf("%s not offered: %+v %+v", method, e.body, e.body.RPC)
		}
	}
	e = mapError(&upstream.InquiryError{Server: "s", Method: api.MethodSample, Err: fmt.Errorf("the host failed")})
	if e.body.RPC != nil {
		t.Errorf("a failed answer is no missing capability: %+v", e.body.RPC)
	}
}
