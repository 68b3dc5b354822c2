// Environment control end to end without the network: a local HTTP server stands in for the
// GitHub API, the embedded runtime defines `github` as an http_json Environment, and the `triage`
// tool, placed with hostEnv({ environments }), calls fetch_issue in that binding as nested calls.
// `npm run example:environments` from the repo root.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, brainEnv, hostEnv } from "@aexhq/brain";
import { fetchIssue } from "../fetch-issue/fetch-issue.ts";
import { triage } from "./triage.ts";

const issues: Record<string, unknown> = {
  "/repos/aexhq/brain/issues/7": { number: 7, title: "Descriptor tools", state: "open" },
  "/repos/aexhq/brain/issues/8": { number: 8, title: "Component tools", state: "closed" },
};
const api = createServer((req, res) => {
  const issue = issues[req.url ?? ""];
  res.writeHead(issue ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify(issue ?? { message: "Not Found" }));
});
await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));

const runtime = await startBrain({
  dataDir: ":memory:",
  port: 0,
  descriptorEnvironments: { github: { type: "http_json", baseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}` } },
});
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "triage", input: { numbers: [7, 8] } }] }, { text: "Issue 7 is open, 8 is closed." }] },
    tools: [
      // The authority is the placement's, explicit: list the bindings and call tools in `github`.
      triage({ env: hostEnv({ environments: { list: true, call: ["github"] } }) }),
      fetchIssue({ env: brainEnv({ name: "github" }), repository: "aexhq/brain" }),
    ],
    deadlineMs: 30_000,
  });
  const answer = await session.send("Triage issues 7 and 8.");
  for await (const record of session.events()) {
    if (record.type === "environment.request") console.log(`asked   ${record.data.request.operation} (by ${record.data.origin})`);
    if (record.type === "environment.response") console.log(`        ${record.data.error ? `refused ${record.data.error.code}: ${record.data.error.message}` : `done ${JSON.stringify(record.data.result)}`}`);
    if (record.type === "tool.call_started" && record.data.origin) console.log(`nested  ${record.data.tool} ${JSON.stringify(record.data.input)} (origin ${record.data.origin})`);
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
