package serve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// completer relays a host's completion/complete to the server whose prompt
// or resource template it names (through the daemon, POST /v1/complete),
// under the server's own name or URI; the server's completions come back
// as it sent them.
type completer struct{ f *front }

func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	f := c.f
	_, prompts, _, _ := f.view(f.s.catalog())
	e, ok := find(prompts, name)
	if !ok {
		return nil, fmt.Errorf("complete an argument of prompt %q: no such prompt is served", name)
	}
	return f.complete(ctx, e.ns, map[string]string{"type": "ref/prompt", "name": e.name}, arg, cctx)
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	f := c.f
	ns, own := f.ns, uri
	if ns == "" {
		var ok bool
		if ns, own, ok = splitResourceURI(uri); !ok {
			return nil, fmt.Errorf("complete an argument of %q: not a resource mcpx serves (they look like mcpx://NS/URI)", uri)
		}
	}
	return f.complete(ctx, ns, map[string]string{"type": "ref/resource", "uri": own}, arg, cctx)
}

// complete asks ns's server for the completions of arg.
func (f *front) complete(ctx context.Context, ns string, ref map[string]string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		params["context"] = cctx
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	r, err := f.s.client().Complete(ctx, api.CompleteRequest{Namespace: ns, Params: b, Session: sessionOf(ctx), Cwd: f.s.opts.Dir})
	if err != nil {
		return nil, fmt.Errorf("complete %s on %s: %w", arg.Name, ns, err)
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, fmt.Errorf("complete %s on %s: read the result: %w", arg.Name, ns, err)
	}
	return &res.Completion, nil
}
