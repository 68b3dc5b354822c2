// Runs the fetch_issue example end to end without the network: a local HTTP server stands in for
// the GitHub API, an embedded Brain runtime defines `github` as an http_json environment pointing
// at it, and a scripted model calls fetch_issue. `npm run example:fetch-issue` from the repo root.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, brainEnv } from "@aexhq/brain";
import { fetchIssue } from "./fetch-issue.ts";

const issues: Record<string, unknown> = { "/repos/aexhq/brain/issues/7": { number: 7, title: "Descriptor tools", state: "open" } };
const api = createServer((req, res) => {
  const issue = req.headers.authorization === "Bearer example-token" ? issues[req.url ?? ""] : undefined;
  res.writeHead(issue ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify(issue ?? { message: "Not Found" }));
});
await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));

// The operator's side (BRAIN_HTTP_ENVIRONMENTS for `brain serve`): the credentials stay here.
const runtime = await startBrain({
  dataDir: ":memory:",
  port: 0,
  descriptorEnvironments: {
    github: { type: "http_json", baseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, headers: { authorization: "Bearer example-token" } },
  },
});
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "fetch_issue", input: { number: 7 } }] }, { text: "Issue 7 is open." }] },
    tools: [fetchIssue({ env: brainEnv({ name: "github" }), repository: "aexhq/brain" })],
  });
  const answer = await session.send("Is issue 7 open?");
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
  api.close();
}
process.exitCode = exitCode;
