// Package upstream connects to MCP servers through mcp-go (stdio, streamable
// HTTP, SSE) and keeps them in pools keyed by ServerHash, with sharing,
// scopes, limits, idle stop, start cooldown and call timeouts.
//
// Requests go through the transport as raw JSON-RPC so that tools/list and
// tools/call results reach the caller byte for byte (mcp-go's typed client
// drops schema keys it does not model). Connections use the initialize
// handshake (protocol 2025-11-25 or the version remembered for the server):
// the stateless 2026-07-28 protocol would need per-request _meta on every
// raw request and a subscriptions/listen stream for list_changed, and
// pinning skips the server/discover probe altogether.
//
// Stdio servers run in their own process group with the captured caller
// environment plus their env block; they are stopped stdin close → SIGTERM
// → SIGKILL on the group, and the last 64 KiB of their stderr is kept for
// errors (*StartError, *ExitError).
package upstream
