// The v1 plain-JSON HTTP placements under Deno: an endpoint under Deno.serve that knows nothing of
// Brain (JSON in, JSON out), a tool placed with http({ url }) and one declared with httpTool(...),
// against the runtime as a Node subprocess that allows the endpoint's origin.
import { Brain, http, httpTool, tool } from "@aexhq/brain";
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
});

Deno.test({ name: "http({ url }) and httpTool(...) placements call a plain-JSON endpoint under Deno.serve; its answers are the values", ...opts }, async () => {
  const seen: string[] = [];
  const endpoint = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const input = await req.json();
    seen.push(`${path} ${JSON.stringify(input)} ${req.headers.get("brain-tool-options")}`);
    const answer = path === "/lookup" ? { value: `${JSON.parse(req.headers.get("brain-tool-options")!).prefix}${input.id}` } : { city: input.city, forecast: "sunny" };
    return Response.json(answer);
  });
  const origin = `http://127.0.0.1:${endpoint.addr.port}`;
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_HTTP_TOOL_ORIGINS: origin });
  const brain = new Brain({ url: runtime.url, token });
  try {
    const weather = httpTool({
      name: "weather",
      description: "Today's weather in a city.",
      input: z.object({ city: z.string() }),
      output: z.object({ city: z.string(), forecast: z.string() }),
      url: `${origin}/weather`,
    });
    const session = await brain.sessions.create({
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }, { name: "weather", input: { city: "Oslo" } }] }, { text: "done" }] },
      tools: [lookup({ env: http({ url: `${origin}/lookup` }), prefix: "customer:" }), weather],
    });
    const answer = await session.send("go");
    if (answer !== "done") throw new Error(`answer ${answer}`);
    const res = await fetch(`${runtime.url}/v1/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${token}` } });
    const all = ((await res.json()) as { records: JournalRecord[] }).records;
    const values = all.flatMap((r) => (r.type === "tool.result" ? [JSON.stringify(r.data.outcome)] : [])).sort();
    const expected = [JSON.stringify({ status: "ok", value: { city: "Oslo", forecast: "sunny" } }), JSON.stringify({ status: "ok", value: { value: "customer:42" } })];
    if (JSON.stringify(values) !== JSON.stringify(expected)) throw new Error(`results ${JSON.stringify(values)}`);
    const statuses = all.flatMap((r) => (r.type === "tool.finished" ? [r.data.status] : []));
    if (JSON.stringify(statuses) !== JSON.stringify(["ok", "ok"])) throw new Error(`finished ${JSON.stringify(statuses)}`);
    if (JSON.stringify(seen.sort()) !== JSON.stringify([`/lookup {"id":"42"} {"prefix":"customer:"}`, `/weather {"city":"Oslo"} {}`])) throw new Error(`seen ${JSON.stringify(seen)}`);
  } finally {
    await brain.close();
    await stopRuntime(runtime.child);
    await endpoint.shutdown();
  }
});
