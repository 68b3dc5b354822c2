// Run by mcp-optional.test.ts in a process of its own: @modelcontextprotocol/sdk cannot be resolved
// (no-mcp-sdk-hooks.mjs), as when the optional package is not installed. A runtime without MCP
// servers runs a turn; /v1/mcp and an operator's MCP server answer a typed error naming the package.
import { register } from "node:module";

register(new URL("./no-mcp-sdk-hooks.mjs", import.meta.url));
const { startBrain } = await import("../../src/index.ts");
const { silentLogger } = await import("../../src/logger.ts");

const brain = await startBrain({ dataDir: ":memory:", port: 0, logger: silentLogger, mcpServers: { fs: { command: "no-such-command" } } });
const auth = { authorization: `Bearer ${brain.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
const created = await fetch(`${brain.url}/v1/sessions`, { method: "POST", headers: auth, body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] }) });
const session = (await created.json()) as { id: string };
const sent = await fetch(`${brain.url}/v1/sessions/${session.id}/messages`, { method: "POST", headers: auth, body: JSON.stringify({ text: "hello", wait: true }) });
const answered = ((await sent.json()) as { status: string }).status;
const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
const endpoint = await fetch(`${brain.url}/v1/mcp`, { method: "POST", headers: auth, body: JSON.stringify(initialize) });
const endpointBody = (await endpoint.json()) as { error: { code: number; message: string; data?: { code?: string } } };
const listing = await fetch(`${brain.url}/v1/mcp-servers/fs/tools`, { headers: auth });
const listingBody = (await listing.json()) as { error: { code: string; message: string } };
await brain.close();
console.log(
  JSON.stringify({
    answered,
    endpoint: { status: endpoint.status, code: endpointBody.error.data?.code, message: endpointBody.error.message },
    listing: { status: listing.status, code: listingBody.error.code, message: listingBody.error.message },
  }),
);
