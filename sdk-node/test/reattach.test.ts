import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { tool, Brain, type BrainError } from "../src/index.ts";
import { memoryRuntime, scripted, records, sendDirect, waitConnected, type Runtime } from "./helpers/brain.mts";

const fixture = fileURLToPath(new URL("./fixtures/reattach-app.mts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));

/** Starts the restarted app; resolves with its first line of JSON output. */
function startApp(runtime: Runtime, host: { id: string; secret: string }, sessionId: string, tools: string): { child: ChildProcess; first: Promise<any> } {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", fixture], {
    cwd,
    env: { ...process.env, BRAIN_URL: runtime.url, BRAIN_TOKEN: runtime.token, BRAIN_HOST_ID: host.id, BRAIN_HOST_SECRET: host.secret, SESSION_ID: sessionId, TOOLS: tools },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = new Promise<any>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c) => {
      out += c;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.once("exit", (code) => reject(new Error(`app exited (${code}) before answering: ${out}`)));
  });
  return { child, first };
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => { child.once("exit", () => resolve()); child.kill("SIGKILL"); });
}

test("10. reattach: a restarted process with the same host identity and tools handles new calls; changed schemas or other tools are refused naming the mismatch", async () => {
  const runtime = await memoryRuntime();
  const host = { id: `reattach-${Math.random().toString(36).slice(2)}`, secret: "reattach-secret-0123456789" };
  const children: ChildProcess[] = [];
  try {
    // The original application creates the session, answers one call, then goes away.
    const lookup = tool({
      name: "lookup", description: "Look up one record.", input: z.object({ id: z.string() }), output: z.object({ value: z.string() }).nullable(), options: z.object({ prefix: z.string() }),
      run: async ({ id }, ctx) => ctx.finish({ value: `${ctx.options.prefix}${id} from the original` }),
    });
    const original = new Brain({ url: runtime.url, token: runtime.token, host });
    const session = await original.sessions.create({
      model: scripted({ toolCalls: [{ name: "lookup", input: { id: "1" } }] }, { text: "first" }, { toolCalls: [{ name: "lookup", input: { id: "2" } }] }, { text: "second" }),
      tools: [lookup({ prefix: "customer:" })],
    });
    assert.is(await session.send("one"), "first");
    await original.close();

    for (const variant of ["changed-schema", "extra", "missing"]) {
      const app = startApp(runtime, host, session.id, variant);
      children.push(app.child);
      const answer = await app.first;
      assert.is(answer.ready, false, variant);
      assert.is(answer.code, "reattach_mismatch", variant);
      assert.match(answer.message, variant === "extra" ? /extra/ : /lookup/, variant);
      if (variant === "changed-schema") assert.match(answer.message, /schema/);
    }

    const app = startApp(runtime, host, session.id, "same");
    children.push(app.child);
    const ready = await app.first;
    assert.is(ready.ready, true);
    await waitConnected(runtime, host.id);
    const reply = await sendDirect(runtime, session.id, "two");
    assert.is(reply.text, "second");
    const values = (await records(session)).flatMap((r) => (r.type === "tool.result" ? [(r.data.outcome as any).value.value] : []));
    assert.equal(values, ["customer:1 from the original", `customer:2 from pid ${ready.pid}`]);
    assert.is.not(ready.pid, process.pid);
  } finally {
    for (const c of children) await kill(c);
    await runtime.close();
  }
});

test("reattach_mismatch for a wrong host names the host and nothing false: the session's tools are not 'not part of the session'", async () => {
  const runtime = await memoryRuntime();
  const crunch = tool({ name: "crunch", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish(null) });
  const stray = tool({ name: "stray", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish(null) });
  const original = new Brain({ url: runtime.url, token: runtime.token, host: { id: "host-a", secret: "secret-of-host-a-0123" } });
  const other = new Brain({ url: runtime.url, token: runtime.token, host: { id: "host-b", secret: "secret-of-host-b-0123" } });
  try {
    const session = await original.sessions.create({ model: scripted({ text: "hi" }), tools: [crunch()] });
    const e = await other.sessions.get(session.id, { tools: [crunch(), stray()] }).then(() => undefined, (e: unknown) => e);
    assert.is((e as BrainError).code, "reattach_mismatch");
    const problems = ((e as BrainError).details as { problems: string[] }).problems;
    assert.equal(problems.length, 2, problems.join(" | "));
    assert.match(problems[0]!, "the session's host tools are placed on host-a, not on this client's host host-b");
    assert.is(problems[1], "tool stray is not part of the session");
    assert.not.match((e as BrainError).message, "tool crunch is not part of the session");
  } finally {
    await other.close();
    await original.close();
    await runtime.close();
  }
});

test("examples/reattach runs: the first process exits cleanly after its background call finished ok, the second reattaches, sees both answers (the wake's too) and serves the next call", () => {
  // Run, not imported: tests may not import examples/ (docs/ARCHITECTURE.md).
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/reattach/main.ts"], { cwd: fileURLToPath(new URL("../../", import.meta.url)), encoding: "utf8", timeout: 60_000 });
  assert.is(run.status, 0, run.stderr);
  const lines = run.stdout.split("\n").filter((l) => l !== "" && !l.startsWith("session "));
  assert.equal(lines, [
    "first   answer: Crunching in the background.",
    "second  saw (message): Crunching in the background.",
    "second  saw (wake): The first sum is 42.",
    "second  answer: Crunching again.",
    "second  saw (message): Crunching again.",
    "second  saw (wake): The second sum is 58.",
    'second  journal: tool.result {"status":"ok","value":{"sum":42}}',
    "second  journal: tool.finished ok",
    'second  journal: tool.result {"status":"ok","value":{"sum":58}}',
    "second  journal: tool.finished ok",
  ]);
});

test.run();
