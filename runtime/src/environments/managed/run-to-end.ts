import { spawn } from "node:child_process";

/** A child process run to its end: its exit, and the last 4000 characters of its output. */
export interface Ran { code: number | null; signal: string | null; out: string }

/**
 * Runs a command to its end, resolving once the process has exited and its output is closed (also
 * when `signal` aborts it: the process is killed and awaited, so nothing it writes comes later).
 */
export function runToEnd(cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; timeout?: number; signal: AbortSignal }): Promise<Ran> {
  return new Promise((resolve) => {
    if (opts.signal.aborted) return resolve({ code: null, signal: "SIGTERM", out: "aborted: the runtime is shutting down or the session was deleted" });
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], ...(opts.timeout ? { timeout: opts.timeout } : {}) });
    let out = "";
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-4000));
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const abort = () => child.kill("SIGKILL");
    opts.signal.addEventListener("abort", abort, { once: true });
    let spawnError: string | undefined;
    child.on("error", (e) => {
      spawnError = String(e);
      // Never spawned: no "close" follows.
      if (child.pid === undefined) done(null, null);
    });
    const done = (code: number | null, signal: string | null) => {
      opts.signal.removeEventListener("abort", abort);
      resolve({ code, signal, out: spawnError === undefined ? out : `${out}\n${spawnError}` });
    };
    child.on("close", done);
  });
}
