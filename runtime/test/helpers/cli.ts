import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const runtimeDir = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `brain serve` from the sources with `env` added (memory journal, any port, a fixed token), for
 * settings it must refuse: resolves with its exit code and output. A CLI that accepted the setting
 * would listen forever, so it is killed after 20 s and the caller's exit-code check fails.
 */
export async function refusedServe(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", "serve"], {
    cwd: runtimeDir,
    env: { ...process.env, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_TOKEN: "t0ken-t0ken-t0ken", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20000);
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  clearTimeout(timer);
  return { code, out };
}
