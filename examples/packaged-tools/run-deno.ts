// `npm run example:packaged-tools:managed:deno`: starts an embedded runtime in Node, then runs
// managed_deno.ts in Deno (the application), which places the packaged tools in managed hosts.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";

const root = fileURLToPath(new URL("../../", import.meta.url));
const deno = `${root}node_modules/deno/deno`;
// The runtime starts `deno` hosts too: this checkout's Deno (a server finds `deno` on its PATH otherwise).
process.env.BRAIN_DENO ??= deno;
const server = await startBrain({ dataDir: ":memory:", port: 0 });
try {
  const host = new URL(server.url).host;
  // Asynchronous spawn: the runtime lives in this process and must keep serving while Deno runs.
  const child = spawn(deno, ["run", "--quiet", `--config=${root}sdk-deno/deno.json`, `--allow-net=${host}`, "--allow-env=BRAIN_URL,BRAIN_TOKEN,BRAIN_HOST_ID,BRAIN_HOST_SECRET", `--allow-read=${root}`, `${root}examples/packaged-tools/managed_deno.ts`], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, BRAIN_URL: server.url, BRAIN_TOKEN: server.token },
  });
  process.exitCode = await new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
} finally {
  await server.close();
}
