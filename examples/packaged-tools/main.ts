// Uses the packaged tools as an application does: imported by package name (the build in dist/,
// with the references brain-tools recorded), placed in a session, called by a scripted model.
// `npm run example:packaged-tools` from the repository root builds the package first.
import { startBrain } from "@aexhq/brain-runtime";
import { Brain } from "@aexhq/brain";
import { countWords, slugify } from "@aexhq/example-text-tools";

console.log(`countWords.executable ${JSON.stringify(countWords.executable)}`);
console.log(`slugify.executable    ${JSON.stringify(slugify.executable)}`);

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        { toolCalls: [{ name: "count_words", input: { text: "Packaged tools carry their reference" } }, { name: "slugify", input: { title: "Packaged Tools, Published" } }] },
        { text: "Five words; the slug is packaged_tools_published." },
      ],
    },
    // No env: they run here, in this application's host, like any run tool.
    tools: [countWords(), slugify({ separator: "_" })],
  });
  const answer = await session.send("Count the words and make a slug.");
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
}
process.exitCode = exitCode;
