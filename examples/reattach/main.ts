// The reattachment recipe end to end: an embedded Brain runtime, then two processes in turn with
// one host identity. `npm run example:reattach` from the repo root.
// 1. first.ts creates a session, starts background work, and exits once that work has finished.
// 2. second.ts reattaches (brain.sessions.get(id, { tools })), sees every answer with
//    session.idle(), and serves the next call itself.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";

const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
// The application's host identity, kept between runs (here: made once for both processes).
const host = { BRAIN_HOST_ID: "reattach-example", BRAIN_HOST_SECRET: randomBytes(24).toString("hex") };

/** Runs one of the two programs with the runtime's address and the host identity; resolves with its output. */
function run(file: string, extra: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", fileURLToPath(new URL(file, import.meta.url))], {
    env: { ...process.env, BRAIN_URL: runtime.url, BRAIN_TOKEN: runtime.token, ...host, ...extra },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
    process.stdout.write(d);
  });
  return new Promise((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} exited with ${code}`)))));
}

let exitCode = 0;
try {
  const first = await run("./first.ts");
  const sessionId = /^session (\S+)$/m.exec(first)![1]!;
  await run("./second.ts", { SESSION_ID: sessionId });
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await runtime.close();
}
process.exitCode = exitCode;
