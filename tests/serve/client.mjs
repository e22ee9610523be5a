// A real MCP client for the `mcpx serve` end-to-end tests: the official
// TypeScript SDK (pinned in tests/npm) connects over stdio or streamable
// HTTP, runs the steps it is given and prints one JSON report on stdout.
//
//   node client.mjs '<plan JSON>'
//
// plan: {
//   "transport": "stdio" | "http",
//   "command": "...", "args": [...], "cwd": "...", "env": {...},   // stdio
//   "url": "http://127.0.0.1:PORT/mcp", "headers": {...},           // http
//   "elicit": "accept" | "decline" | {"action", "content"} | undefined,  // declare elicitation and answer so
//                                     // ("accept": {confirm: true}; an object: itself)
//   "sample": {CreateMessageResult} | "refuse" | undefined,  // declare sampling and answer so
//                                     // ("refuse": a JSON-RPC error)
//   "roots": [{"uri", "name"}] | undefined,  // declare roots and list these
//   "steps": [ {"op": "listTools"} | {"op": "call", "name", "arguments"} |
//              {"op": "listResources"} | {"op": "listResourceTemplates"} |
//              {"op": "readResource", "uri"} | {"op": "listPrompts"} |
//              {"op": "getPrompt", "name", "arguments"} | {"op": "request", "method", "params"} |
//              {"op": "writeFile", "path", "content"} |
//              {"op": "waitNotification", "method", "timeoutMs"} |
//              {"op": "serverCapabilities"} | {"op": "waitUpdates", "uri", "count", "timeoutMs"} |
//              {"op": "countUpdates", "uri"} ]
// }
// A "call" step with "progress": true asks for progress notifications.
// report: {"steps": [{"op", "result"} | {"op", "error": {"code", "message", "data"}}], "notifications": [methods],
//          "elicitations": [messages], "samples": [sampling requests' params], "rootsAsked": n, "progress": [progress notifications' params, with "step" (the
//          index of the call step) and "afterResult" (true if it came after the call's result)],
//          "logs": [notifications/message params],
//          "updates": [notifications/resources/updated params],
//          "wireProgress": [the same, as read from the transport, before the SDK handles them]}
// wireProgress is what serve sent, in the order the host read it: the SDK 1.x handles a
// notification one microtask after a response read with it, and drops a progress
// notification whose call was answered meanwhile, so "progress" may lack the last one.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "npm", "package.json"));
const sdk = (p) => import(require.resolve("@modelcontextprotocol/sdk/" + p));
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema, McpError, ResultSchema } = await sdk("types.js");

const plan = JSON.parse(process.argv[2]);
const report = { steps: [], notifications: [], elicitations: [], samples: [], rootsAsked: 0, progress: [], logs: [], wireProgress: [], updates: [] };
const waiters = [];

const capabilities = plan.elicit ? { elicitation: { form: {}, url: {} } } : {};
if (plan.sample) capabilities.sampling = {};
if (plan.roots) capabilities.roots = {};
const client = new Client({ name: "mcpx-serve-test", version: "1.0.0" }, { capabilities });
if (plan.roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    report.rootsAsked++;
    return { roots: plan.roots };
  });
}
if (plan.sample) {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    report.samples.push(req.params);
    if (plan.sample === "refuse") throw new McpError(-1, "the user refused to sample");
    return plan.sample;
  });
}
client.fallbackNotificationHandler = async (n) => {
  report.notifications.push(n.method);
  if (n.method === "notifications/message") report.logs.push(n.params);
  if (n.method === "notifications/resources/updated") report.updates.push(n.params);
  for (const w of waiters.splice(0)) w();
};
if (plan.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    report.elicitations.push(req.params.message);
    if (typeof plan.elicit === "object") return plan.elicit;
    return plan.elicit === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
  });
}

let transport;
if (plan.transport === "http") {
  transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers || {} } });
} else {
  transport = new StdioClientTransport({
    command: plan.command,
    args: plan.args || [],
    cwd: plan.cwd,
    env: plan.env,
    stderr: "inherit",
  });
}

function waitNotification(method, timeoutMs) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = () => {
      if (report.notifications.includes(method)) return resolve({ method });
      if (Date.now() > deadline) return reject(Object.assign(new Error(`no ${method} within ${timeoutMs} ms`), { code: "timeout" }));
      waiters.push(check);
      setTimeout(check, 200);
    };
    check();
  });
}

function countUpdates(uri) {
  return report.updates.filter((u) => u.uri === uri).length;
}

function waitUpdates(uri, count, timeoutMs) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = () => {
      if (countUpdates(uri) >= count) return resolve({ count: countUpdates(uri) });
      if (Date.now() > deadline) return reject(Object.assign(new Error(`${countUpdates(uri)} updates of ${uri} within ${timeoutMs} ms, not ${count}`), { code: "timeout" }));
      waiters.push(check);
      setTimeout(check, 200);
    };
    check();
  });
}

async function run(step) {
  switch (step.op) {
    case "listTools": return client.listTools();
    case "call": {
      const index = report.steps.length;
      let answered = false;
      const onprogress = (p) => report.progress.push({ ...p, step: index, afterResult: answered });
      const options = step.progress ? { onprogress, resetTimeoutOnProgress: true } : undefined;
      try {
        return await client.callTool({ name: step.name, arguments: step.arguments || {} }, undefined, options);
      } finally {
        answered = true;
      }
    }
    case "listResources": return client.listResources();
    case "listResourceTemplates": return client.listResourceTemplates();
    case "readResource": return client.readResource({ uri: step.uri });
    case "listPrompts": return client.listPrompts();
    case "getPrompt": return client.getPrompt({ name: step.name, arguments: step.arguments || {} });
    case "request": return client.request({ method: step.method, params: step.params || {} }, ResultSchema);
    case "writeFile": writeFileSync(step.path, step.content); return {};
    case "waitNotification": return waitNotification(step.method, step.timeoutMs || 30000);
    case "serverCapabilities": return client.getServerCapabilities();
    case "waitUpdates": return waitUpdates(step.uri, step.count, step.timeoutMs || 30000);
    case "countUpdates": return { count: countUpdates(step.uri) };
    default: throw new Error(`unknown step ${step.op}`);
  }
}

try {
  await client.connect(transport);
  // Watch the wire: the step each request id belongs to, which calls were
  // answered, and each progress notification as it is read.
  const stepOf = new Map();
  const answered = new Set();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "tools/call" && message.id !== undefined) stepOf.set(message.id, report.steps.length);
    return send(message, options);
  };
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "notifications/progress") {
      const { progressToken, ...params } = message.params;
      report.wireProgress.push({ ...params, step: stepOf.get(progressToken) ?? -1, afterResult: answered.has(progressToken) });
    } else if (message.id !== undefined && message.method === undefined) {
      answered.add(message.id);
    }
    return onmessage.call(transport, message, extra);
  };
  for (const step of plan.steps) {
    try {
      report.steps.push({ op: step.op, result: await run(step) });
    } catch (e) {
      report.steps.push({ op: step.op, error: { code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null } });
    }
  }
} catch (e) {
  report.connectError = String(e.stack ?? e);
}
process.stdout.write(JSON.stringify(report) + "\n");
await client.close().catch(() => {});
process.exit(0);
