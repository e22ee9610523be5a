package serve

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A tool's result reaches the host as its server wrote it: each content
// item and the structured content are passed on as bytes, not decoded
// into mcp-go's types and encoded again (which cost as much as the rest of
// serve's work on a call, and dropped what those types do not know). Only
// the aggregate's resource URIs are rewritten (namespaceContent).

// rawContent is one content item passed on as the server wrote it; it
// embeds a TextContent only to count as an mcp.Content, and marshals as
// its own bytes.
type rawContent struct {
	mcp.TextContent
	raw json.RawMessage
}

func (c rawContent) MarshalJSON() ([]byte, error) { return c.raw, nil }

// toolResult is the host's result of a call: binary content the daemon
// moved into the store put back inline, as base64, and, for the aggregate
// (prefix is its namespace), embedded resources and resource links under
// mcpx://NS/.
func toolResult(resp *api.CallResponse, prefix string) *mcp.CallToolResult {
	raw := resp.Result
	if len(resp.Blobs) > 0 {
		var err error
		if raw, err = inlineBlobs(raw, "content", resp.Blobs); err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("mcpx could not read a binary result: %v", err))
		}
	}
	// The fields of mcp.CallToolResult.UnmarshalJSON, content and
	// structured content kept as bytes.
	var top struct {
		Meta              *mcp.Meta         `json:"_meta"`
		ResultType        mcp.ResultType    `json:"resultType"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		InputRequests     mcp.InputRequests `json:"inputRequests"`
		RequestState      string            `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("mcpx could not read the result: %v", err))
	}
	r := &mcp.CallToolResult{Result: mcp.Result{Meta: top.Meta, ResultType: top.ResultType}, IsError: top.IsError,
		Content: make([]mcp.Content, 0, len(top.Content))}
	r.InputRequests, r.RequestState = top.InputRequests, top.RequestState
	if len(top.StructuredContent) > 0 && string(top.StructuredContent) != "null" {
		r.RawStructuredContent = top.StructuredContent
	}
	for _, item := range top.Content {
		if prefix != "" && bytes.Contains(item, []byte(`"resource`)) {
			if c, err := mcp.UnmarshalContent(item); err == nil {
				if b, err := json.Marshal(namespaceContent(prefix, c)); err == nil {
					item = b
				}
			}
		}
		r.Content = append(r.Content, rawContent{raw: item})
	}
	return r
}
