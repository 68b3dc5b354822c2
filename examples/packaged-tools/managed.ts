// The packaged tools in hosts Brain starts and owns: imported by package name like main.ts, placed
// with brainEnv({ name, runtime: "node" }) and brainEnv({ name, runtime: "deno" }). At session
// creation the SDK packs the installed package with its dependencies, uploads it by digest (once per
// server) and places the tools managed; the runtime starts `node` / `deno` processes that serve them.
// `npm run example:packaged-tools:managed` from the repository root builds the package first.
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, brainEnv } from "@aexhq/brain";
import { countWords, slugify } from "@aexhq/example-text-tools";

// This checkout's Deno (a root devDependency); a server finds `deno` on its PATH otherwise.
process.env.BRAIN_DENO ??= fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url));

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
const brain = new Brain({ url: runtime.url, token: runtime.token });
let exitCode = 0;
try {
  for (const name of ["node", "deno"] as const) {
    const env = brainEnv({ name: `text-${name}`, runtime: name });
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [
          { toolCalls: [{ name: "count_words", input: { text: "Brain starts the host" } }, { name: "slugify", input: { title: "Managed by Brain" } }] },
          { text: "Four words; the slug is managed_by_brain." },
        ],
      },
      tools: [countWords({ env }), slugify({ env, separator: "_" })],
    });
    const answer = await session.send("Count the words and make a slug.");
    for await (const record of session.events()) {
      if (record.type === "tool.result") console.log(`${name}  result  ${JSON.stringify(record.data.outcome)}`);
    }
    console.log(`${name}  answer  ${answer}`);
  }
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await brain.close();
  await runtime.close();
}
process.exitCode = exitCode;
