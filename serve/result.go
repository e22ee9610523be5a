package serve

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/jsonstr"
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

// appendToolResult appends r as JSON, the members mcp.CallToolResult's
// MarshalJSON writes, in its order (sorted), without its map of values
// and the reflection and validation of every item it costs: content passed
// on as bytes (rawContent) is copied as it is (compacted, should it hold a
// line break: the stdio transport is one message per line).
func appendToolResult(dst []byte, r *mcp.CallToolResult) ([]byte, error) {
	dst = append(dst, '{')
	if r.Meta != nil {
		b, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `"_meta":`...), b...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if rc, ok := c.(rawContent); ok {
			dst, err = appendCompact(dst, rc.raw)
		} else {
			var b []byte
			if b, err = json.Marshal(c); err == nil {
				dst = append(dst, b...)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	dst = append(dst, ']')
	if len(r.InputRequests) > 0 {
		b, err := json.Marshal(r.InputRequests)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"inputRequests":`...), b...)
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if r.RequestState != "" {
		dst = jsonstr.Append(append(dst, `,"requestState":`...), r.RequestState)
	}
	if r.ResultType != "" {
		dst = jsonstr.Append(append(dst, `,"resultType":`...), string(r.ResultType))
	}
	switch {
	case len(r.RawStructuredContent) > 0:
		var err error
		if dst, err = appendCompact(append(dst, `,"structuredContent":`...), r.RawStructuredContent); err != nil {
			return nil, err
		}
	case r.StructuredContent != nil:
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"structuredContent":`...), b...)
	}
	return append(dst, '}'), nil
}

// appendCompact appends raw, a JSON value as decoded (valid), compacted
// only when it spans lines.
func appendCompact(dst, raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return append(dst, b.Bytes()...), nil
}
