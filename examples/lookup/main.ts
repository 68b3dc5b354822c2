// Runs the lookup example end to end: an embedded Brain runtime (memory journal), a scripted model
// that calls `lookup`, and this process as the host. `npm run example:lookup` from the repo root.
import { startBrain } from "@aexhq/brain-runtime";
import { Brain } from "@aexhq/brain";
import { lookup } from "./lookup.ts";

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    // The scripted model stands in for a real provider: it asks for one lookup, then answers.
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "Customer 42 is Ada Lovelace." }] },
    tools: [lookup({ prefix: "customer:" })],
  });
  const answer = await session.send("Who is customer 42?");
  for await (const record of session.events()) {
    if (record.type === "tool.event") console.log(`event   ${record.data.kind} ${JSON.stringify(record.data.data)}`);
    if (record.type === "tool.result") console.log(`result  ${JSON.stringify(record.data.outcome)}`);
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
