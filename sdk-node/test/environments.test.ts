// ctx.environments (Environment control) through the SDK against a real runtime: the default
// placement grants nothing (every operation a typed `forbidden` naming the grant), hostEnv({
// environments }) is checked at the factory, and a tool with authority lists, creates, sets up,
// calls and deletes bindings; its nested calls run the JS inspect component (componentize-js) with
// the grants of the binding they are called in, never more than the tool holds.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, tool, component, brainEnv, hostEnv, ProtocolError } from "../src/index.ts";
import type { EnvironmentBinding, Outcome } from "../src/index.ts";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildJs } from "../../scripts/build-components.mjs";
import { records, scripted, withBrain } from "./helpers/brain.mts";

const inspectWasm = (await buildJs()).path as string;

const refusal = (e: unknown) => (e instanceof ProtocolError ? { name: e.name, code: e.code, missing: (e.details as { missing?: string } | undefined)?.missing } : { thrown: String(e) });

test("the default placement grants no Environment control: every operation rejects ProtocolError forbidden, naming the grant", async () => {
  await withBrain(async (brain) => {
    const seen: unknown[] = [];
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        const env = ctx.environments;
        for (const op of [
          () => env.list(), () => env.get("x"), () => env.create({ name: "x" }), () => env.update("x", {}),
          () => env.setup("x"), () => env.delete("x"), () => env.call("x", { tool: "y", input: {} }),
        ]) seen.push(await op().then(() => "resolved", refusal));
        return ctx.finish(null);
      },
    });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "t", input: {} }] }, { text: "done" }), tools: [t()] });
    assert.is(await session.send("go"), "done");
    assert.equal(seen, [
      { name: "ProtocolError", code: "forbidden", missing: "environments.list" },
      { name: "ProtocolError", code: "forbidden", missing: "environments.list" },
      { name: "ProtocolError", code: "forbidden", missing: "environments.create" },
      { name: "ProtocolError", code: "forbidden", missing: "environments.create" },
      { name: "ProtocolError", code: "forbidden", missing: 'environments.setup: ["x"]' },
      { name: "ProtocolError", code: "forbidden", missing: "environments.create" },
      { name: "ProtocolError", code: "forbidden", missing: 'environments.call: ["x"]' },
    ]);
    const all = await records(session);
    assert.is(all.filter((r) => r.type === "environment.request").length, 7, "each refused operation is journaled");
  });
});

test("hostEnv({ environments }) checks its grants at the factory; without a name it is the registering application", () => {
  const bad: unknown[] = [
    {}, { environments: "all" }, { environments: { delete: true } }, { environments: { list: "yes" } },
    { environments: { create: { filesystem: { workspace: "admin" } } } }, { environments: { create: { network: true } } },
    { environments: { call: "reader" } }, { environments: { call: ["bad name!"] } },
  ];
  for (const config of bad) assert.throws(() => hostEnv(config as never), TypeError, JSON.stringify(config));
  const env = hostEnv({ environments: { list: true, create: { filesystem: { workspace: "read" } }, call: ["a", "a", "b"] } });
  assert.equal(env, { kind: "host", name: undefined, environments: { list: true, create: { filesystem: { workspace: "read" } }, call: ["a", "b"] } });
  assert.ok(Object.isFrozen(env.environments) && Object.isFrozen(env.environments!.call));
  assert.equal(hostEnv({ name: "app" }), { kind: "host", name: "app" });
});

test("a tool with authority: list, create within its grant, setup, call (nested calls with the binding's grants, journaled with origin), delete", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sdk-envctl-"));
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, workspaceRoot: join(dir, "ws") });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const inspect = tool({
      name: "inspect",
      description: "Inspect one path.",
      input: z.object({ path: z.string() }),
      options: z.object({ depth: z.number().int().positive() }),
      implementation: component(pathToFileURL(inspectWasm)),
    });
    const seen: Record<string, unknown> = {};
    const organize = tool({
      name: "organize",
      description: "Inspect the workspace through a read-only binding it makes itself.",
      input: z.object({}),
      run: async (_i, ctx) => {
        const env = ctx.environments;
        seen.listed = (await env.list()).map((b: EnvironmentBinding) => [b.name, b.source, b.filesystem?.workspace ?? null]);
        seen.tooWide = await env.create({ name: "rw", filesystem: { workspace: "write" }, tools: ["inspect"] }).then(() => "created", refusal);
        seen.created = await env.create({ name: "reader", filesystem: { workspace: "read" }, tools: ["inspect"] });
        seen.setup = (await env.setup("reader")).state;
        const read: Outcome = await env.call("reader", { tool: "inspect", input: { path: "." } });
        const write: Outcome = await env.call("writer", { tool: "inspect", input: { path: "." } });
        seen.writable = [read.status === "ok" && (read.value as { writable: boolean }).writable, write.status === "ok" && (write.value as { writable: boolean }).writable];
        seen.entries = read.status === "ok" ? (read.value as { entries: { name: string }[] }).entries.map((e) => e.name) : read;
        seen.badInput = (await env.call("reader", { tool: "inspect", input: { nope: 1 } })).status;
        await env.delete("reader");
        seen.afterDelete = await env.get("reader").then(() => "found", refusal);
        return ctx.finish({ done: true });
      },
    });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "organize", input: {} }] }, { text: "organized" }),
      tools: [
        organize({ env: hostEnv({ environments: { list: true, create: { filesystem: { workspace: "read" } }, call: ["writer"] } }) }),
        inspect({ env: brainEnv({ name: "writer", filesystem: { workspace: "write" } }), depth: 1 }),
      ],
      deadlineMs: 60_000,
    });
    const ws = join(dir, "ws", session.id);
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, "notes.txt"), "hello");
    assert.is(await session.send("go"), "organized");
    assert.equal(seen.listed, [["writer", "session", "write"]]);
    assert.equal(seen.tooWide, { name: "ProtocolError", code: "forbidden", missing: 'environments.create.filesystem.workspace: "write"' });
    assert.equal(seen.created, { name: "reader", kind: "brain", source: "created", filesystem: { workspace: "read" }, tools: [{ name: "inspect", implementation: "component" }], state: "ready" });
    assert.is(seen.setup, "ready");
    assert.equal(seen.writable, [false, true], "the read binding cannot write; the session's write binding can");
    assert.equal(seen.entries, ["notes.txt"]);
    assert.is(seen.badInput, "error");
    assert.equal(seen.afterDelete, { name: "ProtocolError", code: "not_found", missing: undefined });

    const all = await records(session);
    const started = all.filter((r) => r.type === "tool.call_started") as Extract<(typeof all)[number], { type: "tool.call_started" }>[];
    const [caller, ...nested] = started;
    assert.is(caller!.data.tool, "organize");
    assert.equal(nested.map((r) => [r.data.tool, r.data.origin, (r.data.placement as { env: string; filesystem?: { workspace: string } }).env, (r.data.placement as { filesystem?: { workspace: string } }).filesystem?.workspace]), [
      ["inspect", caller!.data.callId, "reader", "read"],
      ["inspect", caller!.data.callId, "writer", "write"],
      ["inspect", caller!.data.callId, "reader", "read"],
    ]);
    for (const n of nested) assert.is(n.data.deadlineAt, caller!.data.deadlineAt, "bounded by the caller's deadline");
    const ops = all.filter((r) => r.type === "environment.request").map((r) => (r.data as { request: { operation: string } }).request.operation);
    assert.equal(ops, ["list", "create", "create", "setup", "call", "call", "call", "delete", "get"]);
  } finally {
    await brain.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("npm run example:environments: a tool lists the bindings, calls fetch_issue in github as nested calls, and is refused create", () => {
  // Run, not imported: tests may not import examples/ (docs/ARCHITECTURE.md).
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/environments/main.ts"], { cwd: new URL("../../", import.meta.url), encoding: "utf8", timeout: 30000 });
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, /nested  fetch_issue \{"number":7\} \(origin ses_[0-9a-f]+:\d+\)/);
  assert.match(run.stdout, /refused forbidden: ctx\.environments\.create\("scratch"\): the placement does not grant environments\.create/);
  assert.ok(run.stdout.includes(`"open":[7],"closed":[8],"refused":{"code":"forbidden","missing":"environments.create"}`), run.stdout);
  assert.ok(run.stdout.includes("answer  Issue 7 is open, 8 is closed."), run.stdout);
});

test.run();
