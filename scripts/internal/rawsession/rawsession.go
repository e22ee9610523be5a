// Package rawsession opens an MCP session with a stdio server by writing
// JSON-RPC lines by hand, as the bench's zero-work floors (scripts/relayd,
// scripts/coldfloor) do: they measure the hops, so they decode nothing
// they do not have to. It is part of those measuring instruments, never of
// mcpx.
package rawsession

import (
	"bufio"
	"bytes"
	"io"
)

// Open opens the session as mcp-go's client does: server/discover first
// (2026-07-28), else initialize (2025-11-25), with client as the client's
// name. It returns what every later request's params end with: the modern
// _meta (so the server does the work it does for mcp-go's client), or
// nothing.
func Open(in io.Writer, out *bufio.Reader, client string) (meta string, err error) {
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"` + client + `","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	answer, err := Exchange(in, out, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{`+modern+"}}\n")
	if err != nil {
		return "", err
	}
	if bytes.Contains(answer, []byte(`"result"`)) {
		return "," + modern, nil
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}` + "\n"
	if _, err := Exchange(in, out, initialize); err != nil {
		return "", err
	}
	_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return "", err
}

// Exchange writes request and returns the first line after it with an id
// (notifications the server sends meanwhile are skipped).
func Exchange(in io.Writer, out *bufio.Reader, request string) ([]byte, error) {
	if _, err := io.WriteString(in, request); err != nil {
		return nil, err
	}
	for {
		line, err := out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, []byte(`"id"`)) {
			return line, nil
		}
	}
}
