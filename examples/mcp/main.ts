// Brain tools served to an MCP client: an embedded Brain runtime, this process as the host serving
// `count_words` (declared with tool()), and the MCP SDK's own Client calling it over Streamable HTTP
// at /v1/mcp with an API key. Every tools/call is a journaled call: the example prints the progress
// the client heard, the result, and the journal of the MCP session's Brain session.
// `npm run example:mcp` from the repo root.
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, tool } from "@aexhq/brain";

const countWords = tool({
  name: "count_words",
  description: "Counts the words of a text, reporting progress per line.",
  input: z.object({ text: z.string() }),
  output: z.object({ words: z.number(), lines: z.number() }),
  run: async ({ text }, ctx) => {
    const lines = text.split("\n");
    let words = 0;
    for (const [i, line] of lines.entries()) {
      words += line.split(/\s+/).filter(Boolean).length;
      await ctx.emit("progress", { progress: i + 1, total: lines.length, message: `line ${i + 1}` });
    }
    return ctx.finish({ words, lines: lines.length }, { content: `${words} words on ${lines.length} lines` });
  },
});

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
let exitCode = 0;
// An API key for the application: its host's tools are what its MCP sessions list.
const created = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "mcp-example" }) });
const { key } = (await created.json()) as { key: string };
const host = new Brain({ url: runtime.url, token: key });
const client = new Client({ name: "brain-mcp-example", version: "1.0.0" });
try {
  await host.serve([countWords()]);
  const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  console.log(`tools   ${(await client.listTools()).tools.map((t) => t.name).join(", ")}`);
  const result = await client.request(
    { method: "tools/call", params: { name: "count_words", arguments: { text: "to be\nor not to be\nthat is the question" }, _meta: { "aexhq.brain/deadlineMs": 5000 } } },
    CallToolResultSchema,
    { onprogress: (p) => console.log(`progress ${p.progress}/${p.total} ${p.message}`) },
  );
  console.log(`result  ${JSON.stringify(result.structuredContent)} (${(result.content[0] as { text: string }).text})`);
  const journal = await fetch(`${runtime.url}/v1/sessions/${transport.sessionId}/events`, { headers: { authorization: `Bearer ${key}` } });
  for (const r of ((await journal.json()) as { records: Array<{ sequence: number; type: string }> }).records) console.log(`journal ${r.sequence} ${r.type}`);
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await client.close();
  await host.close();
  await runtime.close();
}
process.exitCode = exitCode;
