// Brain tools served to MCP clients, both ways, with the MCP SDK's own Client:
// 1. over Streamable HTTP at the runtime's /v1/mcp, with an API key, the tool served by this process;
// 2. over stdio, the client starting stdio-server.ts (serveMcpStdio), as a local MCP client does.
// Every tools/call is a journaled Brain call: the example prints the progress the client heard, the
// result, and the journal of the Brain session behind the MCP session. `npm run example:mcp` runs this, then client.ts.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain } from "@aexhq/brain";
import { countWords } from "./count-words.ts";

const TEXT = "to be\nor not to be\nthat is the question";

/** Lists the tools, calls count_words with progress and a 5 s Brain deadline, prints what came back. */
async function useTools(client: Client, label: string): Promise<void> {
  console.log(`${label} tools    ${(await client.listTools()).tools.map((t) => t.name).join(", ")}`);
  const result = await client.request(
    { method: "tools/call", params: { name: "count_words", arguments: { text: TEXT }, _meta: { "aexhq.brain/deadlineMs": 5000 } } },
    CallToolResultSchema,
    { onprogress: (p) => console.log(`${label} progress ${p.progress}/${p.total} ${p.message}`) },
  );
  console.log(`${label} result   ${JSON.stringify(result.structuredContent)} (${(result.content[0] as { text: string }).text})`);
}

/** The records of the key's newest session: the Brain session behind an MCP session. */
async function printJournal(url: string, key: string, label: string, sessionId?: string): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  const id = sessionId ?? ((await (await fetch(`${url}/v1/sessions?limit=1`, { headers })).json()) as { sessions: Array<{ id: string }> }).sessions[0]!.id;
  const { records } = (await (await fetch(`${url}/v1/sessions/${id}/events`, { headers })).json()) as { records: Array<{ sequence: number; type: string }> };
  console.log(`${label} journal  ${records.map((r) => `${r.sequence}:${r.type}`).join(" ")}`);
}

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
let exitCode = 0;
// An API key for the application: its hosts' tools are what its MCP sessions list.
const created = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "mcp-example" }) });
const { key } = (await created.json()) as { key: string };
const host = new Brain({ url: runtime.url, token: key });
const http = new Client({ name: "brain-mcp-example", version: "1.0.0" });
const stdio = new Client({ name: "brain-mcp-example-stdio", version: "1.0.0" });
try {
  await host.serve([countWords()]);
  const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await http.connect(transport);
  await useTools(http, "http ");
  await printJournal(runtime.url, key, "http ", transport.sessionId);
  await host.close();

  await stdio.connect(new StdioClientTransport({
    command: process.execPath,
    args: ["--conditions=brain-source", "--import", "tsx", fileURLToPath(new URL("./stdio-server.ts", import.meta.url))],
    env: { ...(process.env as Record<string, string>), BRAIN_URL: runtime.url, BRAIN_TOKEN: key },
    stderr: "inherit",
  }));
  await useTools(stdio, "stdio");
  await printJournal(runtime.url, key, "stdio");
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await stdio.close();
  await http.close();
  await host.close();
  await runtime.close();
}
process.exitCode = exitCode;
