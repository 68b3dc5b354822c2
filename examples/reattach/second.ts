// The second process, started after the first has exited: reattaches to SESSION_ID with the same
// host identity and exactly the original tools, then waits for the session to be idle and prints
// every answer so far: the first process's, and that of the wake turn its background call caused.
// It sends one more message, whose tool call this process serves, and waits again.
import { Brain } from "@aexhq/brain";
import { crunch } from "./crunch.ts";

const brain = new Brain(); // the same BRAIN_HOST_ID/BRAIN_HOST_SECRET as the first process
try {
  const session = await brain.sessions.get(process.env.SESSION_ID!, { tools: [crunch()] });
  for (const answer of await session.idle()) console.log(`second  saw (${answer.cause}): ${answer.text}`);
  console.log(`second  answer: ${await session.send("Add up 50 and 8.")}`);
  for (const answer of await session.idle()) console.log(`second  saw (${answer.cause}): ${answer.text}`);
  // How each crunch call ended, from the journal: both finished with their sums, none cut off.
  for await (const r of session.events()) {
    if (r.type === "tool.result") console.log(`second  journal: tool.result ${JSON.stringify(r.data.outcome)}`);
    if (r.type === "tool.finished") console.log(`second  journal: tool.finished ${r.data.status}`);
  }
} finally {
  await brain.close();
}
