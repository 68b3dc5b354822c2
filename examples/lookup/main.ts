// `npm run example:lookup`: an embedded Brain runtime, the scripted model, and the lookup tool
// running in this process. Against your own server, drop startBrain and set BRAIN_URL/BRAIN_TOKEN.
import { Brain } from "@aexhq/brain";
import { startBrain } from "@aexhq/brain-runtime";
import { lookup } from "./lookup.ts";

const server = await startBrain({ dataDir: ":memory:", port: 0 });
const brain = new Brain({ url: server.url, token: server.token });
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "Record 42 belongs to Ada Lovelace." }] },
    tools: [lookup({ prefix: "customer:" })],
  });
  console.log(await session.send("Who is customer 42?"));
  for await (const record of session.events()) {
    if (record.type === "tool.result") console.log("tool result:", JSON.stringify(record.data.outcome));
  }
} finally {
  await brain.close();
  await server.close();
}
