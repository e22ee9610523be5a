// Package upstream connects to MCP servers (stdio through its own JSON-RPC
// transport, rpcstdio.go; streamable HTTP and SSE through mcp-go's) and
// keeps them in pools keyed by ServerHash, with sharing, scopes, limits,
// idle stop, start cooldown and call timeouts.
//
// Requests go through the transport as raw JSON-RPC so that tools/list and
// tools/call results reach the caller byte for byte (mcp-go's typed client
// drops schema keys it does not model). A connection speaks the protocol
// generation its server does (generation.go): 2026-07-28 (server/discover,
// _meta on every request, input_required, subscriptions/listen) or
// 2025-11-25 and older (initialize, a session, server→client requests),
// learned at the first start and asked for directly when remembered. What a
// server asks during a call (elicitation, sampling) goes to the call's
// Answerer (inquiry.go).
//
// Stdio servers run in their own process group with the captured caller
// environment plus their env block; they are stopped stdin close → SIGTERM
// → SIGKILL on the group, and the last 64 KiB of their stderr is kept for
// errors (*StartError, *ExitError).
package upstream
