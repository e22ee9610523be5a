// A real third-party MCP server for the end-to-end tests: the official
// TypeScript SDK v2 (@modelcontextprotocol/server, pinned in tests/npm) on
// stdio, with an echo and tools that ask their client for input: a form
// (several kinds of fields, with defaults) and a URL; a prompt (brief) and
// a resource template (note://{name}: note://ask asks whose note it is,
// note://missing is not found) that ask the same way. Written once for both
// protocol generations: a 2026-07-28 client gets input_required results, a
// 2025-11-25 one elicitation/create requests (the SDK's shim).
//
//   node server.mjs
//
// Environment:
//   TS_PROTOCOL=modern   serve 2026-07-28 only (serveStdio rejecting the
//                        older handshake); legacy: 2025-11-25 and older (a
//                        server connected by hand, as SDK 1.x ones are);
//                        unset: both (serveStdio, the SDK's way)
//   TS_METHOD_LOG=path   append the method of every request received, one
//                        per line
import { createRequire } from "node:module";
import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "npm", "package.json"));
const { McpServer, ResourceTemplate, ResourceNotFoundError, inputRequired } = require("@modelcontextprotocol/server");
const { StdioServerTransport, serveStdio } = require("@modelcontextprotocol/server/stdio");
const { z } = require("zod");

const protocol = process.env.TS_PROTOCOL ?? "";
const log = process.env.TS_METHOD_LOG;

const form = {
  type: "object",
  properties: {
    city: { type: "string", title: "City", description: "where you live", default: "Lisbon" },
    nights: { type: "integer", title: "Nights", minimum: 1, maximum: 14, default: 3 },
    room: { type: "string", title: "Room", oneOf: [{ const: "single", title: "Single" }, { const: "double", title: "Double" }], default: "double" },
    breakfast: { type: "boolean", title: "Breakfast", default: true },
  },
  required: ["city", "nights"],
};

// render is an answer as the Go fixture renders its own: the action, then
// the content (keys sorted) as JSON.
function render(responses, key) {
  const r = responses?.[key];
  if (!r) return undefined;
  if (!r.content) return r.action;
  const sorted = Object.fromEntries(Object.entries(r.content).sort(([a], [b]) => a.localeCompare(b)));
  return r.action + " " + JSON.stringify(sorted);
}

// newServer builds the server: serveStdio asks its factory for one per
// connection era; a hand-wired transport serves one.
function newServer() {
  const server = new McpServer({ name: "mcpx-ts-server", version: "1.0.0" });
  server.registerTool("echo", {
    description: "Answer with the text given.",
    inputSchema: z.object({ text: z.string() }),
    annotations: { readOnlyHint: true },
  }, async ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("book", {
    description: "Ask where and how long to stay (a form) and answer with what was chosen.",
    annotations: { readOnlyHint: true },
  }, async (ctx) => {
    const answer = render(ctx.mcpReq.inputResponses, "stay");
    if (answer !== undefined) return { content: [{ type: "text", text: answer }] };
    return inputRequired({ inputRequests: { stay: inputRequired.elicit({ message: "Book a room", requestedSchema: form }) } });
  });
  server.registerTool("verify", {
    description: "Ask the user to open a page (URL elicitation) and answer with the action chosen.",
    annotations: { readOnlyHint: true },
  }, async (ctx) => {
    const answer = render(ctx.mcpReq.inputResponses, "page");
    if (answer !== undefined) return { content: [{ type: "text", text: answer }] };
    return inputRequired({ inputRequests: { page: inputRequired.elicitUrl({ message: "Verify your account", url: "https://example.org/verify?session=ts" }) } });
  });
  const owner = { type: "object", properties: { owner: { type: "string", title: "Owner" } }, required: ["owner"] };
  server.registerPrompt("brief", { description: "Ask who the brief is for, then brief them." }, async (ctx) => {
    const answer = render(ctx.mcpReq.inputResponses, "reader");
    if (answer !== undefined) return { messages: [{ role: "user", content: { type: "text", text: "brief for " + answer } }] };
    return inputRequired({ inputRequests: { reader: inputRequired.elicit({ message: "Who is the brief for?", requestedSchema: owner }) } });
  });
  server.registerResource("note", new ResourceTemplate("note://{name}", { list: undefined }), { description: "A note; note://ask asks whose." },
    async (uri, { name }, ctx) => {
      if (name === "missing") throw new ResourceNotFoundError(uri.href);
      let text = "note " + name;
      if (name === "ask") {
        const answer = render(ctx.mcpReq.inputResponses, "whose");
        if (answer === undefined) {
          return inputRequired({ inputRequests: { whose: inputRequired.elicit({ message: "Whose note?", requestedSchema: owner }) } });
        }
        text = "note of " + answer;
      }
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text }] };
    });
  return server;
}

// recorded makes transport append the method of each request it reads to
// TS_METHOD_LOG before its owner handles it.
function recorded(transport) {
  if (!log) return transport;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (typeof message?.method === "string" && message.id !== undefined) appendFileSync(log, message.method + "\n");
      return deliver?.call(transport, message, extra);
    };
    return start();
  };
  return transport;
}

if (protocol === "legacy") {
  await newServer().connect(recorded(new StdioServerTransport()));
} else {
  serveStdio(() => newServer(), { legacy: protocol === "modern" ? "reject" : "serve", transport: recorded(new StdioServerTransport()) });
}
