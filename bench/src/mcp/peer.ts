// MCP clients for the peer section: Streamable HTTP on loopback (server in this process, like our
// embedded runtime) and stdio (server in a child process).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { EventEmitter, setMaxListeners } from "node:events";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpEchoServer } from "./echo-server.ts";

export interface McpPeer {
  call(): Promise<void>;
  close(): Promise<void>;
}

async function callEcho(client: Client): Promise<void> {
  const r = await client.callTool({ name: "echo", arguments: { x: 1 } });
  if (r.isError) throw new Error(`mcp echo failed: ${JSON.stringify(r)}`);
}

/** Streamable HTTP with its defaults (a session id, SSE-framed responses). */
export async function httpPeer(): Promise<McpPeer> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await mcpEchoServer().connect(transport);
  const http = createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  const port = (http.address() as AddressInfo).port;
  const client = new Client({ name: "bench", version: "1.0.0" });
  // The client transport shares one AbortSignal across its requests and an abort listener is left on
  // it per request, so Node warns (MaxListenersExceededWarning) thousands of times into the report.
  // Its own behaviour, not ours to fix: the warning is silenced for this peer's lifetime only.
  const defaultMax = EventEmitter.defaultMaxListeners;
  setMaxListeners(0);
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return {
    call: () => callEcho(client),
    async close() {
      setMaxListeners(defaultMax);
      await client.close();
      await transport.close();
      await new Promise<void>((r) => {
        http.close(() => r());
        http.closeAllConnections();
      });
    },
  };
}

export async function stdioPeer(): Promise<McpPeer> {
  const script = fileURLToPath(new URL("./stdio-server.ts", import.meta.url));
  const transport = new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", script], stderr: "inherit" });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  return {
    call: () => callEcho(client),
    close: () => client.close(),
  };
}
