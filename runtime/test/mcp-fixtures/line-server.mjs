// A small stdio MCP server speaking raw JSON-RPC lines, for what the real servers will not do:
// record what it receives (to prove a call is sent once and cancelled on the wire), hang in
// initialize or answer it with a line that is not JSON, answer a malformed result, advertise a schema
// Brain cannot check.
// Usage: node line-server.mjs <mode> <log file>; modes: ok, hang-initialize, garbage-initialize, malformed, remote-ref.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

// uvu imports every file under test/: serve only when run as a program.
if (process.argv[1] === fileURLToPath(import.meta.url)) serve(...process.argv.slice(2));

function serve(mode = "ok", log) {
  const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
  const tools = [
    { name: "slow", description: "Never answers.", inputSchema: { type: "object", properties: {} } },
    { name: "add", description: "Adds.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } },
  ];
  if (mode === "remote-ref") tools.push({ name: "remote", inputSchema: { type: "object", properties: { x: { $ref: "https://example.com/x.json" } } } });

  createInterface({ input: process.stdin }).on("line", (line) => {
    if (log) appendFileSync(log, `${line}\n`);
    const m = JSON.parse(line);
    if (m.method === "initialize") {
      if (mode === "hang-initialize") return;
      if (mode === "garbage-initialize") return void process.stdout.write("hello, I am not JSON-RPC\n");
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "line-server", version: "1.0.0" } } });
    } else if (m.method === "tools/list") {
      send({ jsonrpc: "2.0", id: m.id, result: { tools } });
    } else if (m.method === "tools/call") {
      if (mode === "malformed") return send({ jsonrpc: "2.0", id: m.id, result: { content: "not an array" } });
      if (m.params.name === "add") return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: String(m.params.arguments.a + m.params.arguments.b) }] } });
      // slow: never answers
    }
  });
}
