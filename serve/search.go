package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// --expose=search: three tools instead of every tool, for hosts that choke
// on hundreds: search_tools, describe_tool, call_tool.

func (f *front) searchTools() []server.ServerTool {
	readOnly := mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)})
	return []server.ServerTool{
		{
			Tool: mcp.NewTool("search_tools",
				mcp.WithDescription("Search the tools of every MCP server mcpx serves. Returns the best matches as NS.TOOL with the first sentence of each description; pass a name to describe_tool for its input schema, then to call_tool."),
				mcp.WithString("query", mcp.Required(), mcp.Description("words describing what the tool should do")),
				mcp.WithNumber("limit", mcp.Description("at most this many results (default 10)")),
				readOnly),
			Handler: f.searchHandler,
		},
		{
			Tool: mcp.NewTool("describe_tool",
				mcp.WithDescription("Show one tool's full definition: description, input schema, output schema and annotations."),
				mcp.WithString("name", mcp.Required(), mcp.Description("the tool's NS.TOOL name, as search_tools returns it")),
				readOnly),
			Handler: f.describeHandler,
		},
		{
			Tool: mcp.NewTool("call_tool",
				mcp.WithDescription("Call a tool by its NS.TOOL name. Destructive tools are confirmed with you first, or refused when they cannot be."),
				mcp.WithString("name", mcp.Required(), mcp.Description("the tool's NS.TOOL name")),
				mcp.WithObject("arguments", mcp.Description("the tool's arguments, as its input schema describes them")),
			),
			Handler: f.callHandler,
		},
	}
}

func (f *front) searchHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, err := req.RequireString("query")
	if err != nil {
		return nil, err
	}
	limit := req.GetInt("limit", 10)
	if limit <= 0 {
		limit = 10
	}
	r, err := f.s.client().Search(ctx, q)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("search failed: %v", err)), nil
	}
	cat := f.s.catalog()
	var lines []string
	for _, hit := range r.Results {
		e, err := cat.lookup(hit.Namespace + "." + hit.Name)
		if err != nil {
			continue // filtered out by --ns or not in this catalog
		}
		lines = append(lines, e.served+" — "+firstSentence(hit.Description))
		if len(lines) == limit {
			break
		}
	}
	if len(lines) == 0 {
		return mcp.NewToolResultText(fmt.Sprintf("No tool matches %q.", q)), nil
	}
	return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
}

// named is the catalog entry the "name" argument of req names.
func (f *front) named(req mcp.CallToolRequest) (string, entry, error) {
	name, err := req.RequireString("name")
	if err != nil {
		return "", entry{}, err
	}
	e, err := f.s.catalog().lookup(name)
	return name, e, err
}

func (f *front) describeHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, e, err := f.named(req)
	if err != nil {
		return nil, err
	}
	var def map[string]json.RawMessage
	if err := json.Unmarshal(e.def, &def); err != nil {
		return nil, fmt.Errorf("read the definition of %s: %w", name, err)
	}
	def["name"], _ = json.Marshal(e.served)
	b, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(string(b)), nil
}

func (f *front) callHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, e, err := f.named(req)
	if err != nil {
		return nil, err
	}
	// The tool's arguments as the host wrote them (numbers keep their
	// digits).
	var outer struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(arguments(req), &outer); err != nil {
		return nil, fmt.Errorf("arguments of call_tool: %w", err)
	}
	raw := bytes.TrimSpace(outer.Arguments)
	if len(raw) > 0 && string(raw) != "null" && raw[0] != '{' {
		return nil, fmt.Errorf("arguments of %s must be an object", name)
	}
	return f.call(ctx, e, raw, progressToken(req), req.Params.MultiRoundTripParams)
}

// firstSentence is the first sentence of a description's first line.
func firstSentence(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if i := strings.Index(line, ". "); i >= 0 {
		line = line[:i+1]
	}
	return line
}
