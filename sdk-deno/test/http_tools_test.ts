// The Application tool extension under Deno: httpTools() served by Deno.serve, a session placed on
// httpEnv({ url }), against the runtime as a Node subprocess that allows the endpoint's origin.
import { Brain, httpEnv, httpTools, tool } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const token = crypto.randomUUID();
const opts = { sanitizeOps: false, sanitizeResources: false };

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.finish({ value: `${ctx.options.prefix}${id}` }, { content: `found ${id}` });
  },
});

Deno.test({ name: "httpTools() under Deno.serve answers a session's call; the finish is journaled with its content", ...opts }, async () => {
  // The endpoint must exist before the runtime (which allows its origin), and the handler needs the runtime's URL.
  let handler: (r: Request) => Promise<Response> = () => Promise.resolve(new Response(null, { status: 503 }));
  const endpoint = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (r) => handler(r));
  const origin = `http://127.0.0.1:${endpoint.addr.port}`;
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_HTTP_TOOL_ORIGINS: origin });
  handler = httpTools([lookup], { brainUrl: runtime.url });
  const brain = new Brain({ url: runtime.url, token });
  try {
    const session = await brain.sessions.create({
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "done" }] },
      tools: [lookup({ env: httpEnv({ url: `${origin}/tools` }), prefix: "customer:" })],
    });
    const answer = await session.send("go");
    if (answer !== "done") throw new Error(`answer ${answer}`);
    const res = await fetch(`${runtime.url}/v1/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${token}` } });
    const all = ((await res.json()) as { records: JournalRecord[] }).records;
    const result = all.find((r) => r.type === "tool.result") as Extract<JournalRecord, { type: "tool.result" }> | undefined;
    const finished = all.find((r) => r.type === "tool.finished") as Extract<JournalRecord, { type: "tool.finished" }> | undefined;
    if (JSON.stringify(result?.data.outcome) !== JSON.stringify({ status: "ok", value: { value: "customer:42" } })) throw new Error(`result ${JSON.stringify(result)}`);
    if (result?.data.content !== "found 42") throw new Error(`content ${JSON.stringify(result?.data)}`);
    if (finished?.data.status !== "ok") throw new Error(`finished ${JSON.stringify(finished)}`);
  } finally {
    await brain.close();
    await stopRuntime(runtime.child);
    await endpoint.shutdown();
  }
});
