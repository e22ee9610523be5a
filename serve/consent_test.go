package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// elicitFunc answers serve's question as the host's user would.
type elicitFunc func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(req)
}

func answer(action mcp.ElicitationResponseAction, content any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
}

// A destructive call runs through serve only on an explicit yes: the host's
// user accepts the question and answers confirm: true. Anything else (no,
// an accepted form without the yes, a declined or cancelled question, a
// host that cannot ask or whose answer fails) is a refusal that says why,
// over the real MCP protocol (mcp-go's in-process transport).
func TestConsentNeedsAnExplicitYes(t *testing.T) {
	tests := []struct {
		name   string
		host   elicitFunc // nil: the host does not support elicitation
		ok     bool
		reason string
	}{
		{"yes", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, map[string]any{"confirm": true}), nil
		}, true, ""},
		{"accepted, but no", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, map[string]any{"confirm": false}), nil
		}, false, "the user did not confirm it"},
		{"accepted without an answer", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, nil), nil
		}, false, "the user did not confirm it"},
		{"accepted with a yes that is not a boolean", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, map[string]any{"confirm": "true"}), nil
		}, false, "the user did not confirm it"},
		{"declined", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionDecline, map[string]any{"confirm": true}), nil
		}, false, "the user answered decline"},
		{"cancelled", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionCancel, nil), nil
		}, false, "the user answered cancel"},
		{"the host fails to ask", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return nil, errors.New("no terminal")
		}, false, "asking for confirmation failed"},
		{"a host that cannot ask", nil, false, "mcpx call demo.delete_note --yes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []mcp.ElicitationRequest
			host := tt.host
			if host != nil {
				host = func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					asked = append(asked, req)
					return tt.host(req)
				}
			}
			ok, why := confirmThrough(t, host)
			if ok != tt.ok || !strings.Contains(why, tt.reason) {
				t.Fatalf("confirm = %v, %q; want %v and a reason containing %q", ok, why, tt.ok, tt.reason)
			}
			if !ok && !strings.Contains(why, "demo.delete_note was not run") {
				t.Errorf("the refusal %q does not say the call was not run", why)
			}
			if host == nil {
				return
			}
			if len(asked) != 1 {
				t.Fatalf("the host was asked %d times, want once", len(asked))
			}
			checkQuestion(t, asked[0])
		})
	}
}

// checkQuestion: the host is asked a yes/no question about the call, a
// required boolean named confirm.
func checkQuestion(t *testing.T, req mcp.ElicitationRequest) {
	t.Helper()
	var schema map[string]any // as the host reads it off the wire
	b, _ := json.Marshal(req.Params.RequestedSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("the requested schema %s: %v", b, err)
	}
	props, _ := schema["properties"].(map[string]any)
	confirm, _ := props["confirm"].(map[string]any)
	required, _ := schema["required"].([]any)
	if !strings.Contains(req.Params.Message, "demo.delete_note") || confirm["type"] != "boolean" || len(required) != 1 || required[0] != "confirm" {
		t.Errorf("the question: %q, schema %v", req.Params.Message, req.Params.RequestedSchema)
	}
}

// confirmThrough runs serve's confirm for demo.delete_note inside a tool
// call of an MCP client connected in process; host answers its
// elicitation (nil: the client does not declare elicitation).
func confirmThrough(t *testing.T, host elicitFunc) (bool, string) {
	t.Helper()
	ctx := context.Background()
	s := &front{mcp: server.NewMCPServer("mcpx", "test", server.WithElicitation())}
	var (
		ok  bool
		why string
	)
	s.mcp.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ok, why = s.confirm(ctx, "demo.delete_note", "it is destructive")
		return mcp.NewToolResultText("asked"), nil
	})
	var opts []client.ClientOption
	caps := mcp.ClientCapabilities{}
	if host != nil {
		opts = append(opts, client.WithElicitationHandler(host))
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	c, err := client.NewInProcessClientWithOptions(s.mcp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "host", Version: "1"}
	init.Params.Capabilities = caps
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "ask"
	if _, err := c.CallTool(ctx, call); err != nil {
		t.Fatal(err)
	}
	return ok, why
}
