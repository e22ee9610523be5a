// A 2026-07-28 host that subscribes to a resource through `mcpx serve`:
// the official TypeScript SDK v2 (@modelcontextprotocol/client, pinned in
// tests/npm) opens a subscriptions/listen stream naming the resource,
// calls a tool that changes it until an update arrives on the stream, and
// prints one JSON report on stdout.
//
//   node listen2026.mjs '<plan JSON>'
//
// plan: {"url": "http://127.0.0.1:PORT/mcp[/NS]", "headers": {...},
//        "uris": ["..."],  // the resourceSubscriptions asked for
//        "bump": "TOOL"}   // the tool that changes (one of) them
// report: {"acks": [notifications/subscriptions/acknowledged params],
//          "updates": [notifications/resources/updated params], "bumps": n, "error"}
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "npm", "package.json"));
const { Client, StreamableHTTPClientTransport } = await import(require.resolve("@modelcontextprotocol/client"));

const plan = JSON.parse(process.argv[2]);
const report = { acks: [], updates: [], bumps: 0 };
const client = new Client({ name: "mcpx-serve-listen-2026", version: "1.0.0" }, { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } });
client.setNotificationHandler("notifications/subscriptions/acknowledged", (n) => { report.acks.push(n.params); });
client.setNotificationHandler("notifications/resources/updated", (n) => { report.updates.push(n.params); });
const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers || {} } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ac = new AbortController();
try {
  await client.connect(transport);
  const listening = client.request({ method: "subscriptions/listen", params: { notifications: { resourceSubscriptions: plan.uris } } },
    { signal: ac.signal, timeout: 600000 }).catch((e) => { if (!ac.signal.aborted) report.error = String(e.message ?? e); });
  for (let i = 0; i < 300 && report.acks.length === 0 && !report.error; i++) await sleep(100);
  for (let i = 0; i < 60 && report.updates.length === 0 && report.acks.length > 0; i++) {
    await client.callTool({ name: plan.bump, arguments: {} });
    report.bumps++;
    for (let j = 0; j < 5 && report.updates.length === 0; j++) await sleep(100);
  }
  ac.abort();
  await listening;
} catch (e) {
  report.error = String(e.stack ?? e);
}
process.stdout.write(JSON.stringify(report) + "\n");
await client.close().catch(() => {});
process.exit(0);
