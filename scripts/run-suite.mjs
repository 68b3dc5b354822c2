// Runs one test suite as a child process: output streamed live and kept for parsing, and a hard
// time limit after which the whole process group (the suite and anything it spawned) is SIGKILLed.
import { spawn } from "node:child_process";

/** How long a suite's leftover children may keep its output pipes open after it exited. */
const EXIT_GRACE_MS = 5_000;

// Suites run detached (their own process group) so they can be killed whole; that also means a
// Ctrl-C on the runner no longer reaches them, so pass it on.
const running = new Set();
const killGroup = (pid) => {
  try { process.kill(-pid, "SIGKILL"); } catch { /* group already gone */ }
};
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    for (const pid of running) killGroup(pid);
    process.exit(130);
  });
}

/**
 * Runs `suite` ({command, args, cwd, env?}) in its own process group.
 * Resolves `{ code, output, timedOut, error?, leftovers? }`; never rejects.
 */
export function runSuite(suite, timeoutMs, out = { stdout: process.stdout, stderr: process.stderr }) {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    let exitCode;
    let settled = false;
    const child = spawn(suite.command, suite.args, {
      cwd: suite.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", ...suite.env },
    });
    if (child.pid) running.add(child.pid);
    child.stdout.on("data", (chunk) => { output += chunk; out.stdout.write(chunk); });
    child.stderr.on("data", (chunk) => { output += chunk; out.stderr.write(chunk); });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    let grace;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      running.delete(child.pid);
      resolve({ output, timedOut, ...result });
    };
    child.on("error", (error) => finish({ code: null, error }));
    // The suite is done when it exits; a child it forgot to stop must not hold the run hostage.
    child.on("exit", (code) => {
      exitCode = code;
      grace = setTimeout(() => {
        killGroup(child.pid);
        child.stdout.destroy();
        child.stderr.destroy();
        finish({ code: exitCode, leftovers: true });
      }, EXIT_GRACE_MS);
    });
    child.on("close", (code) => finish({ code: exitCode ?? code }));
  });
}
