// `npm run example:lookup:deno`: starts an embedded runtime in Node, then runs main_deno.ts in Deno.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";

const root = fileURLToPath(new URL("../../", import.meta.url));
const server = await startBrain({ dataDir: ":memory:", port: 0 });
try {
  const host = new URL(server.url).host;
  // Asynchronous spawn: the runtime lives in this process and must keep serving while Deno runs.
  const child = spawn(`${root}node_modules/deno/deno`, ["run", "--quiet", `--config=${root}sdk-deno/deno.json`, `--allow-net=${host}`, "--allow-env=BRAIN_URL,BRAIN_TOKEN,BRAIN_HOST_ID,BRAIN_HOST_SECRET", `${root}examples/lookup/main_deno.ts`], {
    stdio: "inherit",
    env: { ...process.env, BRAIN_URL: server.url, BRAIN_TOKEN: server.token },
  });
  process.exitCode = await new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
} finally {
  await server.close();
}
