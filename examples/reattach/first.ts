// The first process: creates the session under the application's host identity
// (BRAIN_HOST_ID/BRAIN_HOST_SECRET), sends one message whose tool goes on in the background, prints
// the session id, and exits cleanly once that background work has finished: `brain.close({ waitMs })`
// waits (up to the bound) for the calls this process runs instead of cutting them off.
import { Brain } from "@aexhq/brain";
import { crunch } from "./crunch.ts";

const brain = new Brain(); // BRAIN_URL, BRAIN_TOKEN, BRAIN_HOST_ID, BRAIN_HOST_SECRET
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        { toolCalls: [{ name: "crunch", input: { numbers: [20, 22] } }] },
        { text: "Crunching in the background." },
        { text: "The first sum is 42." }, // the wake turn, once crunch finishes
        { toolCalls: [{ name: "crunch", input: { numbers: [50, 8] } }] }, // the second process's message
        { text: "Crunching again." },
        { text: "The second sum is 58." },
      ],
    },
    tools: [crunch()],
  });
  console.log(`session ${session.id}`);
  console.log(`first   answer: ${await session.send("Add up 20 and 22.")}`);
} finally {
  // Keep serving until the background call has finished (at most 30 s), then close.
  await brain.close({ waitMs: 30_000 });
}
