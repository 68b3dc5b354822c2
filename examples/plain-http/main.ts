// The v1 plain-JSON HTTP placements, end to end without the network: a local HTTP server is an
// existing endpoint that knows nothing of Brain (JSON in, JSON out), an embedded runtime allows its
// origin, and a scripted model calls one tool placed with http({ url }) and one declared with
// httpTool(...). `npm run example:plain-http` from the repo root.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, http, httpTool, tool } from "@aexhq/brain";
import { z } from "zod";

// The existing endpoint: the body is the tool's input, the JSON answer is its output.
const records: Record<string, string> = { "customer:42": "Ada Lovelace" };
const endpoint = createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const input = JSON.parse(body);
  const options = JSON.parse(String(req.headers["brain-tool-options"] ?? "{}")); // the placement's options
  const answer =
    req.url === "/lookup" ? (records[`${options.prefix}${input.id}`] === undefined ? null : { value: records[`${options.prefix}${input.id}`] })
    : req.url === "/weather" ? { city: input.city, forecast: "sunny" }
    : undefined;
  if (answer === undefined) res.writeHead(404).end("no such tool");
  else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
});
await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;

// A tool with only a contract: the endpoint serves it, so there is no run here.
const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
});

// Declared and placed in one call.
const weather = httpTool({
  name: "weather",
  description: "Today's weather in a city.",
  input: z.object({ city: z.string() }),
  output: z.object({ city: z.string(), forecast: z.string() }),
  url: `${url}/weather`,
});

// The operator allows the endpoint's origin (BRAIN_HTTP_TOOL_ORIGINS for `brain serve`).
const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [url] });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }, { name: "weather", input: { city: "London" } }] }, { text: "Ada Lovelace; sunny in London." }],
    },
    tools: [lookup({ env: http({ url: `${url}/lookup` }), prefix: "customer:" }), weather],
  });
  const answer = await session.send("Who is customer 42, and what is the weather in London?");
  for await (const record of session.events()) {
    if (record.type === "tool.result") console.log(`result  ${JSON.stringify(record.data.outcome)}`);
  }
  console.log(`answer  ${answer}`);
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await brain.close();
  await runtime.close();
  endpoint.close();
}
process.exitCode = exitCode;
