// MCP servers as tools, end to end without the network: an embedded Brain runtime whose operator
// defines `everything` as a stdio MCP server (@modelcontextprotocol/server-everything, started and
// owned by Brain), an application that places two of its tools with brain.mcpTools, and a scripted
// model that calls them: one result, one long operation whose progress is journaled as events.
// `npm run example:mcp` from the repo root (after serve.ts).
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain } from "@aexhq/brain";

const everything = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

// The operator's side (BRAIN_MCP_SERVERS for `brain serve`).
const runtime = await startBrain({ dataDir: ":memory:", port: 0, mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } } });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  // The application's side: only the server's name; the contracts are the server's schemas.
  const tools = await brain.mcpTools({ server: "everything", include: ["get-sum", "trigger-long-running-operation"] });
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        { toolCalls: [{ name: "get-sum", input: { a: 2, b: 40 } }, { name: "trigger-long-running-operation", input: { duration: 0.6, steps: 3 } }] },
        { text: "The sum is 42 and the operation finished." },
      ],
    },
    tools,
  });
  const answer = await session.send("Add 2 and 40, and run the long operation.");
  for await (const record of session.events()) {
    if (record.type === "tool.event") console.log(`event   ${record.data.kind} ${JSON.stringify(record.data.data)}`);
    if (record.type === "tool.result") console.log(`result  ${JSON.stringify(record.data.content ?? record.data.outcome)}`);
  }
  console.log(`answer  ${answer}`);
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await brain.close();
  await runtime.close();
}
process.exitCode = exitCode;
