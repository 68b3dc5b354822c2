// The Brain runtime as a Node subprocess, for the Deno tests (sdk-deno/test/, conformance/deno/).

const root = new URL("../", import.meta.url);

/** Runs node from the repository root (through /usr/bin/env: Deno substitutes itself for a command named plainly "node"). */
export function node(args: string[], env: Record<string, string> = {}, stdout: "piped" | "null" = "piped"): Deno.Command {
  return new Deno.Command("/usr/bin/env", { args: ["node", ...args], cwd: root, env, stdout, stderr: "inherit" });
}

/** `brain serve` from the sources with `env`; resolves with its URL once it prints that it listens. */
export async function serveRuntime(env: Record<string, string>): Promise<{ url: string; child: Deno.ChildProcess }> {
  const child = node(["--conditions=brain-source", "--import", "tsx", "runtime/src/cli.ts", "serve"], env).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the runtime exited before listening:\n${seen}`);
    seen += value;
    const m = /brain listening on (http:\/\/\S+)/.exec(seen);
    if (m) {
      // Keep draining so the child never blocks on a full pipe.
      (async () => { while (!(await reader.read()).done) { /* drain */ } })();
      return { url: m[1]!, child };
    }
  }
}

/** SIGTERM (the runtime flushes and closes), then waits for the exit. */
export async function stopRuntime(child: Deno.ChildProcess): Promise<void> {
  try { child.kill("SIGTERM"); } catch { /* already gone */ }
  await child.status;
}
