// Runs the summarizer end to end: an embedded runtime, a scripted model (step 1 asks for the tool,
// step 2 answers the tool's own ctx.model request, step 3 is the final answer), this process as
// the host. `npm run example:summarize` from the repo root; with OPENAI_API_KEY set (and
// BRAIN_EXAMPLE_MODEL=openai:<model>) the same program runs against the real provider.
import { startBrain } from "@aexhq/brain-runtime";
import { Brain } from "@aexhq/brain";
import { summarize } from "./summarize.ts";

const report = "The committee met four times this year. It approved the new budget, postponed the building plan, and elected a new chair.";
const [provider, model] = (process.env.BRAIN_EXAMPLE_MODEL ?? "scripted").split(":");
const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    model:
      provider === "openai" || provider === "anthropic"
        ? { provider, model: model ?? "" }
        : {
            provider: "scripted",
            script: [
              { toolCalls: [{ name: "summarize", input: { title: "Annual report", text: report } }] },
              { text: "The committee approved the budget, delayed the building plan and chose a new chair." },
              { text: "The annual report says the budget passed and the building plan waits." },
            ],
          },
    tools: [summarize()],
  });
  const answer = await session.send(`Summarize the annual report: ${report}`);
  for await (const record of session.events()) {
    if (record.type === "model.request" && record.data.origin) console.log(`model   asked by ${record.data.origin}`);
    if (record.type === "tool.result") console.log(`result  ${JSON.stringify(record.data.outcome)}\ncontent ${record.data.content}`);
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
