package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Post2026 sends one stateless 2026-07-28 request as the conformance
// suite does: the protocol version, a client name and caps (the client's
// capabilities) in params' _meta, and the standard headers (Mcp-Name from
// params' name or uri), plus header. It returns the HTTP status and the
// JSON-RPC response, from a JSON body or the event stream's message that
// has an id.
func Post2026(t *testing.T, url, method string, params, caps map[string]any, header map[string]string) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpx-tests", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	for _, key := range []string{"name", "uri"} {
		if name, ok := params[key].(string); ok {
			req.Header.Set("Mcp-Name", name)
		}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all bytes.Buffer
	raw := []byte(nil)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id"`) {
				raw = []byte(data)
			}
		}
	} else {
		all.ReadFrom(resp.Body)
		raw = all.Bytes()
	}
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("%s: HTTP %d, answer %q: %v", method, resp.StatusCode, all.String(), err)
	}
	return resp.StatusCode, msg
}
