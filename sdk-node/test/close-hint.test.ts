// Forgetting `brain.close()` must not hang the process silently: a real user script (a subprocess
// against a real runtime) that ends without closing exits on its own and prints one hint naming
// `brain.close()`; one that closes prints nothing; one that serves tools stays up.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { memoryRuntime, type Runtime } from "./helpers/brain.mts";

const SCRIPT = fileURLToPath(new URL("./fixtures/forgets-close.mts", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url));

interface Run { child: ChildProcess; stdout: string; stderr: string; answeredAt?: number; exit: Promise<{ code: number | null; at: number }> }

function start(runtime: Runtime, mode: string): Run {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", TSX, SCRIPT], {
    env: { ...process.env, BRAIN_URL: runtime.url, BRAIN_TOKEN: runtime.token, MODE: mode },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run: Run = { child, stdout: "", stderr: "", exit: new Promise((resolve) => child.on("exit", (code) => resolve({ code, at: Date.now() }))) };
  child.stdout!.on("data", (d) => {
    run.stdout += d;
    if (run.answeredAt === undefined && run.stdout.includes("answer:")) run.answeredAt = Date.now();
  });
  child.stderr!.on("data", (d) => (run.stderr += d));
  return run;
}

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test("a script that forgets brain.close() exits within a few seconds of its last line and prints one hint naming brain.close()", async () => {
  const runtime = await memoryRuntime();
  const run = start(runtime, "forget");
  try {
    const { code, at } = await within(run.exit, 30_000, "the script exited");
    assert.is(code, 0, run.stderr);
    assert.match(run.stdout, "answer: Found it.");
    assert.ok(run.answeredAt !== undefined && at - run.answeredAt < 3000, `exited ${at - (run.answeredAt ?? 0)} ms after its last line`);
    const hints = run.stderr.split("\n").filter((l) => l.includes("await brain.close()"));
    assert.is(hints.length, 1, run.stderr);
    assert.match(hints[0]!, "Brain client still open");
  } finally {
    run.child.kill("SIGKILL");
    await runtime.close();
  }
});

test("a script that closes its client exits without the hint", async () => {
  const runtime = await memoryRuntime();
  const run = start(runtime, "close");
  try {
    const { code } = await within(run.exit, 30_000, "the script exited");
    assert.is(code, 0, run.stderr);
    assert.match(run.stdout, "answer: Found it.");
    assert.not.match(run.stderr, "brain.close()");
  } finally {
    run.child.kill("SIGKILL");
    await runtime.close();
  }
});

test("a client serving tools (brain.serve) keeps the process alive", async () => {
  const runtime = await memoryRuntime();
  const run = start(runtime, "serve");
  try {
    await within(new Promise<void>((resolve) => {
      const check = () => (run.stdout.includes("serving") ? resolve() : setTimeout(check, 20));
      check();
    }), 30_000, "the script started serving");
    const early = await Promise.race([run.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
    assert.is(early, undefined, `the serving process exited: ${run.stderr}`);
    assert.is(run.child.exitCode, null);
  } finally {
    run.child.kill("SIGKILL");
    await run.exit;
    await runtime.close();
  }
});

test.run();
