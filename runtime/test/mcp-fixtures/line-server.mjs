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
    // Answers that Brain's own tools/call path must read as the SDK's client would.
    { name: "split", description: "Answers in two writes, ending in CRLF.", inputSchema: { type: "object" } },
    { name: "rich", description: "Answers content blocks beyond plain text.", inputSchema: { type: "object" } },
    { name: "no-envelope", description: "Answers neither a result nor an error.", inputSchema: { type: "object" } },
    { name: "refuse", description: "Answers a JSON-RPC error.", inputSchema: { type: "object", properties: { code: { type: "number" } } } },
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
      if (m.params.name === "split") {
        const line = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "two halves é" }] } });
        const cut = Buffer.from(line).length - 6; // between the two bytes of é (then `"}]}}`): a chunk may end mid-character
        process.stdout.write(Buffer.from(line).subarray(0, cut));
        return setTimeout(() => process.stdout.write(Buffer.concat([Buffer.from(line).subarray(cut), Buffer.from("\r\n")])), 30);
      }
      if (m.params.name === "rich") {
        const content = [
          { type: "text", text: "annotated", annotations: { audience: ["user"], priority: 0.5 } },
          { type: "resource_link", uri: "file:///x.txt", name: "x.txt" },
        ];
        return send({ jsonrpc: "2.0", id: m.id, result: { content, structuredContent: { n: 1 }, _meta: { "example.com/k": true } } });
      }
      if (m.params.name === "no-envelope") return send({ jsonrpc: "2.0", id: m.id });
      if (m.params.name === "refuse") return send({ jsonrpc: "2.0", id: m.id, error: { code: m.params.arguments.code ?? -32602, message: "refused here", data: { why: "test" } } });
      // slow: never answers
    }
  });
}
