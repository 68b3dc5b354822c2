// The lookup example under Deno: the same lookup.ts, the Deno SDK (sdk-deno/mod.ts through
// sdk-deno/deno.json), against the Brain server named by BRAIN_URL and BRAIN_TOKEN.
// Permissions: --allow-net=<brain host> --allow-env=BRAIN_URL,BRAIN_TOKEN
import { Brain } from "@aexhq/brain";
import { lookup } from "./lookup.ts";

const brain = new Brain();
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "Record 42 belongs to Ada Lovelace." }] },
    tools: [lookup({ prefix: "customer:" })],
  });
  console.log(await session.send("Who is customer 42?"));
} finally {
  await brain.close();
}
