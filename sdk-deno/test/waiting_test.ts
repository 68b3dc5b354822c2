// Issue 30 under Deno: waiting on a session (idle, next, wake answers), brain.close() ending open
// calls `cancelled` with later ctx calls rejecting `call_finished` (never unhandled), a send() cut
// off by a server stop reported as a lost connection, and the hint for a forgotten close(). The
// runtime runs as a Node subprocess (scripts/deno-runtime.ts).
import { Brain, SdkError, tool, type ToolContext } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function withRuntime(body: (url: string, token: string, child: Deno.ChildProcess) => Promise<void>): Promise<void> {
  const token = crypto.randomUUID();
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0" });
  try {
    await body(runtime.url, token, runtime.child);
  } finally {
    await stopRuntime(runtime.child);
  }
}

async function journal(url: string, token: string, sessionId: string): Promise<JournalRecord[]> {
  const res = await fetch(`${url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { records: JournalRecord[] }).records;
}

Deno.test({ name: "idle() waits for a background call and its wake turn and returns both answers; next() hands them out once", ...opts }, async () => {
  await withRuntime(async (url, token) => {
    const brain = new Brain({ url, token });
    try {
      const crunch = tool({ name: "crunch", description: "d", input: z.object({}), run: async (_i, ctx) => void setTimeout(() => void ctx.finish(42), 200) });
      const model = { provider: "scripted" as const, script: [{ toolCalls: [{ name: "crunch", input: {} }] }, { text: "started" }, { text: "the sum is 42" }] };
      const session = await brain.sessions.create({ model, tools: [crunch()] });
      check(await session.send("go") === "started", "the send's answer");
      const answers = await session.idle();
      const seen = JSON.stringify(answers.map((a) => [a.cause, a.status, a.text]));
      check(seen === JSON.stringify([["message", "completed", "started"], ["wake", "completed", "the sum is 42"]]), `idle answers ${seen}`);
      const other = await brain.sessions.get(session.id); // a new handle starts at the beginning
      const first = await other.next();
      const second = await other.next();
      check(first.text === "started" && second.cause === "wake" && second.text === "the sum is 42", `next ${JSON.stringify([first, second])}`);
    } finally {
      await brain.close();
    }
  });
});

Deno.test({ name: "close() ends an open call cancelled; the tool's later emit rejects call_finished and is never an unhandled rejection", ...opts }, async () => {
  const unhandled: unknown[] = [];
  const listener = (e: PromiseRejectionEvent) => {
    unhandled.push(e.reason);
    e.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", listener);
  try {
    await withRuntime(async (url, token) => {
      const brain = new Brain({ url, token });
      let held: ToolContext | undefined;
      const hold = tool({ name: "hold", description: "d", input: z.object({}), run: (_i, ctx) => void (held = ctx as ToolContext) });
      const session = await brain.sessions.create({ model: { provider: "scripted", script: [{ toolCalls: [{ name: "hold", input: {} }] }, { text: "holding" }, { text: "woken" }] }, tools: [hold()] });
      check(await session.send("go") === "holding", "answer");
      await brain.close();
      check(held!.signal.aborted, "the signal aborted");
      void held!.emit("late", {}); // fire and forget, as background work does
      const e = await held!.emit("later", {}).then(() => undefined, (e: unknown) => e);
      check(e instanceof SdkError && e.code === "call_finished", `emit after close: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 50));
      const statuses = (await journal(url, token, session.id)).flatMap((r) => (r.type === "tool.finished" ? [r.data.status] : []));
      check(JSON.stringify(statuses) === JSON.stringify(["cancelled"]), `finished ${JSON.stringify(statuses)}`);
    });
  } finally {
    globalThis.removeEventListener("unhandledrejection", listener);
  }
  check(unhandled.length === 0, `unhandled rejections: ${unhandled.map(String).join("; ")}`);
});

Deno.test({ name: "a send() in flight when the server stops rejects connection_lost, not 'could not reach Brain'", ...opts }, async () => {
  const token = crypto.randomUUID();
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0" });
  const brain = new Brain({ url: runtime.url, token });
  try {
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const hang = tool({ name: "hang", description: "d", input: z.object({}), run: async () => { running(); await new Promise(() => {}); } });
    const session = await brain.sessions.create({ model: { provider: "scripted", script: [{ toolCalls: [{ name: "hang", input: {} }] }, { text: "never" }] }, tools: [hang()] });
    const sent = session.send("go", { retryForMs: 400 }).then(() => undefined, (e: unknown) => e);
    await started;
    await stopRuntime(runtime.child);
    const e = await sent;
    check(e instanceof SdkError && e.code === "connection_lost", `error ${String(e)}`);
    check(/^send\(\): the connection to Brain was lost while the message's turn ran/.test((e as Error).message), (e as Error).message);
  } finally {
    await brain.close();
    await stopRuntime(runtime.child);
  }
});

/**
 * Runs the fixture under Deno against the runtime until it exits, its stderr satisfies `until`, or
 * `ms` pass; a process still running then is killed. Resolves with what it printed.
 */
async function runFixture(url: string, token: string, mode: string, until: (stderr: string) => boolean, ms: number): Promise<{ exited: boolean; code: number | undefined; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--config", new URL("../deno.json", import.meta.url).pathname, "--allow-net=127.0.0.1", "--allow-env", "--allow-read", new URL("./fixtures/forgets_close.ts", import.meta.url).pathname],
    env: { BRAIN_URL: url, BRAIN_TOKEN: token, MODE: mode },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { stdout: "", stderr: "" };
  let seen!: () => void;
  const matched = new Promise<"matched">((r) => (seen = () => r("matched")));
  const drain = async (stream: ReadableStream<Uint8Array>, key: "stdout" | "stderr") => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      out[key] += chunk;
      if (key === "stderr" && until(out.stderr)) seen();
    }
  };
  const drained = Promise.all([drain(child.stdout, "stdout"), drain(child.stderr, "stderr")]);
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => (deadline = setTimeout(() => r("timeout"), ms)));
  const status = await Promise.race([child.status, matched, timeout]);
  clearTimeout(deadline);
  const exited = typeof status === "object";
  if (!exited) child.kill("SIGKILL");
  await child.status;
  await drained;
  return { exited, code: exited ? status.code : undefined, ...out };
}

Deno.test({ name: "a Deno script that forgets brain.close() prints the hint naming it (it cannot exit: a Deno WebSocket cannot be unref'd); one that closes exits without it", ...opts }, async () => {
  await withRuntime(async (url, token) => {
    const forgot = await runFixture(url, token, "forget", (e) => e.includes("await brain.close()"), 30_000);
    check(forgot.stdout.includes("answer: Found it."), `stdout ${forgot.stdout} ${forgot.stderr}`);
    const hints = forgot.stderr.split("\n").filter((l) => l.includes("await brain.close()"));
    check(hints.length === 1 && hints[0]!.includes("Brain client still open"), `stderr ${forgot.stderr}`);
    check(!forgot.exited, "the forgetful script was still running when it gave the hint (Deno keeps it up)");
    const closed = await runFixture(url, token, "close", () => false, 30_000);
    check(closed.exited && closed.code === 0, `the closing script exited: ${closed.stderr}`);
    check(!closed.stderr.includes("brain.close()"), `no hint: ${closed.stderr}`);
  });
});
