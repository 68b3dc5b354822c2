// The packaged tools in hosts Brain starts and owns, placed from a Deno application: the Deno SDK
// (sdk-deno/mod.ts through sdk-deno/deno.json) and the example package imported by name from
// node_modules (this checkout's, "nodeModulesDir": "manual"; a project of your own can use "auto").
// At session creation the SDK packs the installed package with its dependencies (read from
// node_modules), uploads it once per server and places the tools; Brain runs them in `node` and `deno`.
// Permissions: --allow-net=<brain host> --allow-env=BRAIN_URL,BRAIN_TOKEN --allow-read (node_modules).
// `npm run example:packaged-tools:managed:deno` starts a runtime and runs this.
import { Brain, brainEnv } from "@aexhq/brain";
import { countWords, slugify } from "@aexhq/example-text-tools";

const brain = new Brain(); // BRAIN_URL, BRAIN_TOKEN
try {
  for (const name of ["node", "deno"] as const) {
    const env = brainEnv({ name: `text-${name}`, runtime: name });
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [
          { toolCalls: [{ name: "count_words", input: { text: "Brain starts the host" } }, { name: "slugify", input: { title: "Placed from Deno" } }] },
          { text: "Four words; the slug is placed_from_deno." },
        ],
      },
      tools: [countWords({ env }), slugify({ env, separator: "_" })],
    });
    const answer = await session.send("Count the words and make a slug.");
    for await (const record of session.events()) {
      if (record.type === "tool.result") console.log(`${name}  result  ${JSON.stringify((record.data as { outcome: unknown }).outcome)}`);
    }
    console.log(`${name}  answer  ${answer}`);
  }
} finally {
  await brain.close();
}
