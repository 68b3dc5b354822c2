import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, hostEnv, brainEnv, component, http } from "../src/index.ts";

const base = { description: "d", input: z.object({}), run: async () => null };

test("bad names throw at declaration", () => {
  for (const name of ["", "1abc", "has space", "a".repeat(65), "dot.name"]) {
    assert.throws(() => tool({ ...base, name }), TypeError, name);
  }
  tool({ ...base, name: "ok_name-1" });
});

test("missing description, non-zod input, both run and implementation throw", () => {
  assert.throws(() => tool({ ...base, name: "x", description: "" }), TypeError);
  assert.throws(() => tool({ ...base, name: "x", input: { type: "object" } as never }), TypeError);
  assert.throws(() => tool({ ...base, name: "x", implementation: component("file:///x.wasm") } as never), TypeError);
});

test("a tool with only a contract (neither run nor implementation) can be placed only at a plain-JSON endpoint", () => {
  const t = tool({ name: "x", description: "d", input: z.object({}) });
  assert.throws(() => t(), /x\(\): tool x has only a contract .* place it with env: http\(\{ url \}\)/);
  assert.throws(() => t({ env: hostEnv({ name: "app" }) }), TypeError);
  assert.throws(() => t({ env: brainEnv({ name: "b" }) }), TypeError);
  assert.equal(t({ env: http({ url: "https://legacy.example/x" }) }).env, { kind: "http_plain", name: "https://legacy.example/x", url: "https://legacy.example/x" });
  const c = tool({ name: "c", description: "d", input: z.object({}), implementation: component("file:///x.wasm") });
  assert.throws(() => c({ env: http({ url: "https://legacy.example/x" }) }), /component and descriptor implementations run in brainEnv/);
});

test("factory options are parsed once (defaults, transforms) and deeply frozen", () => {
  const t = tool({ ...base, name: "opt", options: z.object({ prefix: z.string().default("p:"), tags: z.array(z.string()).default([]) }) });
  const placed = t({});
  assert.equal(placed.options, { prefix: "p:", tags: [] });
  assert.ok(Object.isFrozen(placed.options));
  assert.ok(Object.isFrozen((placed.options as { tags: string[] }).tags));
  assert.throws(() => t({ prefix: 3 as never }), TypeError);
});

test("required options are checked at run time too: a factory called without them (past its types) throws a TypeError naming the field", () => {
  const t = tool({ ...base, name: "lookup", options: z.object({ prefix: z.string() }) });
  const untyped = t as unknown as (config?: unknown) => unknown;
  assert.throws(() => untyped(), (e: unknown) => e instanceof TypeError && /lookup\(\): invalid options: prefix/.test(e.message));
  assert.throws(() => untyped({}), /invalid options: prefix/);
  assert.equal(t({ prefix: "customer:" }).options, { prefix: "customer:" });
});

test("with no options schema the factory takes no options", () => {
  const t = tool({ ...base, name: "noopt" });
  assert.equal(t().options, {});
  assert.throws(() => (t as (c: unknown) => unknown)({ prefix: "x" }), /takes no options/);
});

test("env is taken out of the options and kept as the placement", () => {
  const t = tool({ ...base, name: "placed", options: z.strictObject({ n: z.number() }) });
  const env = hostEnv({ name: "app" });
  const p = t({ env, n: 1 });
  assert.is(p.env, env);
  assert.equal(p.options, { n: 1 });
});

test("hostEnv and brainEnv validate their names", () => {
  assert.throws(() => hostEnv({ name: "" }), TypeError);
  assert.throws(() => brainEnv({ name: "r", filesystem: { workspace: "all" as never } }), TypeError);
  assert.is(brainEnv({ name: "reader", filesystem: { workspace: "read" } }).filesystem?.workspace, "read");
});

test("the contract carries the schemas and a digest over name and schemas only", async () => {
  const a = tool({ ...base, name: "same", description: "first" });
  const b = tool({ ...base, name: "same", description: "second" });
  const c = tool({ ...base, name: "same", input: z.object({ x: z.string() }) });
  const [ca, cb, cc] = await Promise.all([a.tool.contract(), b.tool.contract(), c.tool.contract()]);
  assert.match(ca.digest, /^[0-9a-f]{64}$/);
  assert.is(ca.digest, cb.digest);
  assert.is.not(ca.digest, cc.digest);
  assert.is(ca.outputSchema, undefined);
});

test.run();
