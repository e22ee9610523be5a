// A 2026-07-28 host for the `mcpx serve` end-to-end tests: the official
// TypeScript SDK v2 (@modelcontextprotocol/client, pinned in tests/npm)
// connects over streamable HTTP, calls the tools it is given and prints
// one JSON report on stdout. The SDK answers a server's input_required
// results itself, through the handlers registered here, and sends the
// call again (multi round-trip).
//
//   node host2026.mjs '<plan JSON>'
//
// plan: {"url": "http://127.0.0.1:PORT/mcp/NS", "headers": {...},
//        "elicit": {"action": "accept", "content": {...}} | undefined,  // declare elicitation and answer so
//        "sample": {CreateMessageResult} | undefined,  // declare sampling and answer so
//        "roots": [{"uri", "name"}] | undefined,  // declare roots and list these
//        "calls": [{"name", "arguments", "progress": bool}]}   // progress: ask for progress notifications
//                 // a call with "op": "prompt" gets prompt name, with "op": "read" reads resource "uri"
// report: {"protocolVersion", "results": [{"result"} | {"error": {"code", "message", "data"}}], "elicitations": [params], "samples": [params], "rootsAsked": n,
//          "toolCalls": n (tools/call requests sent, each round one),
//          "progress": [progress params, with "call" (its index) and "afterResult"]}
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "npm", "package.json"));
const { Client, StreamableHTTPClientTransport } = await import(require.resolve("@modelcontextprotocol/client"));

const plan = JSON.parse(process.argv[2]);
const report = { results: [], elicitations: [], samples: [], rootsAsked: 0, toolCalls: 0, progress: [] };
const capabilities = plan.elicit ? { elicitation: { form: {}, url: {} } } : {};
if (plan.sample) capabilities.sampling = {};
if (plan.roots) capabilities.roots = {};
const client = new Client({ name: "mcpx-serve-test-2026", version: "1.0.0" }, { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
if (plan.elicit) {
  client.setRequestHandler("elicitation/create", async (req) => {
    report.elicitations.push(req.params);
    return plan.elicit;
  });
}
if (plan.roots) {
  client.setRequestHandler("roots/list", async () => {
    report.rootsAsked++;
    return { roots: plan.roots };
  });
}
if (plan.sample) {
  client.setRequestHandler("sampling/createMessage", async (req) => {
    report.samples.push(req.params);
    return plan.sample;
  });
}
// Counts the tools/call requests on the wire: each round of a call is one.
const counting = async (url, init) => {
  try {
    if (typeof init?.body === "string" && JSON.parse(init.body).method === "tools/call") report.toolCalls++;
  } catch {}
  return fetch(url, init);
};
const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers || {} }, fetch: counting });
try {
  await client.connect(transport);
  report.protocolVersion = client.protocolVersion ?? transport.protocolVersion ?? null;
  for (const [index, c] of plan.calls.entries()) {
    let answered = false;
    const onprogress = (p) => report.progress.push({ ...p, call: index, afterResult: answered });
    const options = c.progress ? { onprogress, resetTimeoutOnProgress: true } : undefined;
    try {
      let result;
      if (c.op === "prompt") result = await client.getPrompt({ name: c.name, arguments: c.arguments || {} });
      else if (c.op === "read") result = await client.readResource({ uri: c.uri });
      else result = await client.callTool({ name: c.name, arguments: c.arguments || {} }, options);
      report.results.push({ result });
    } catch (e) {
      report.results.push({ error: { code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null } });
    } finally {
      answered = true;
    }
  }
} catch (e) {
  report.connectError = String(e.stack ?? e);
}
process.stdout.write(JSON.stringify(report) + "\n");
await client.close().catch(() => {});
process.exit(0);
