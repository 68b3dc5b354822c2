// MCP tools from the Node SDK: brain.mcpTools places the tools of an MCP server the operator of a
// real embedded runtime defines (@modelcontextprotocol/server-everything over stdio); a declared
// tool() placed with mcpEnv runs when its schemas are the server's, and is refused when not.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, BrainError, mcpEnv, tool } from "../src/index.ts";
import { finished, records, results, scripted } from "./helpers/brain.mts";

const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));

let runtime: Awaited<ReturnType<typeof startBrain>>;
let brain: Brain;

test.before(async () => {
  runtime = await startBrain({ dataDir: ":memory:", port: 0, mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } });
  brain = new Brain({ url: runtime.url, token: runtime.token });
});

test.after(async () => {
  await brain?.close();
  await runtime?.close();
});

test("brain.mcpTools places the server's tools with its schemas; a call's content and value come back", async () => {
  const tools = await brain.mcpTools({ server: "everything", include: ["echo", "get-sum"] });
  assert.equal(tools.map((t) => t.tool.name), ["echo", "get-sum"]);
  const session = await brain.sessions.create({
    model: scripted({ toolCalls: [{ name: "get-sum", input: { a: 2, b: 40 } }] }, { text: "done" }),
    tools,
  });
  assert.is(await session.send("add"), "done");
  const all = await records(session);
  const started = all.find((r) => r.type === "tool.call_started")!;
  assert.equal((started.data as { placement: unknown }).placement, { kind: "mcp", server: "everything", tool: "get-sum" });
  assert.equal(finished(all).map((f) => f.data.status), ["ok"]);
  assert.match(String((results(all)[0]!.data as { content?: string }).content), /42/);
});

test("brain.mcpTools names what it cannot place: an unknown tool, an unknown server", async () => {
  const missing = await brain.mcpTools({ server: "everything", include: ["nope"] }).catch((e: unknown) => e);
  assert.ok(missing instanceof BrainError && missing.code === "not_found", String(missing));
  assert.match((missing as Error).message, /lists no tool "nope" \(it lists .*echo/);
  const server = await brain.mcpTools({ server: "other" }).catch((e: unknown) => e);
  assert.ok(server instanceof BrainError && server.code === "not_found", String(server));
  assert.throws(() => mcpEnv({ name: "bad name" }), /mcpEnv: invalid name/);
});

test("a declared tool() placed with mcpEnv must have the server's schemas: other schemas are digest_mismatch", async () => {
  const echo = tool({ name: "echo", description: "Echo.", input: z.object({ text: z.string() }) });
  assert.throws(() => tool({ name: "echo", description: "Echo.", input: z.object({ text: z.string() }), run: () => "x" })({ env: mcpEnv({ name: "everything" }) }), /MCP server everything runs the tool itself/);
  const refused = await brain.sessions.create({ model: scripted({ text: "unused" }), tools: [echo({ env: mcpEnv({ name: "everything" }) })] }).catch((e: unknown) => e);
  assert.ok(refused instanceof BrainError && refused.code === "digest_mismatch", String(refused));
});

test("npm run example:mcp prints the results, the progress events and the answer", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/mcp/main.ts"], { cwd: root, encoding: "utf8", timeout: 60000 });
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, /result  "The sum of 2 and 40 is 42\."/);
  assert.match(run.stdout, /event   progress \{"progress":3,"total":3\}/);
  assert.match(run.stdout, /answer  The sum is 42 and the operation finished\./);
});

test.run();
