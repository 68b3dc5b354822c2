// Which input schemas the SDK parses synchronously: only those with nothing Zod would await.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { parsesSynchronously } from "../src/sync-parse.ts";

test("schemas of built-in types and checks parse synchronously", () => {
  const plain = [
    z.object({ x: z.number() }),
    z.object({ name: z.string().min(1).max(10).trim(), mail: z.email(), n: z.int().positive().optional(), tags: z.array(z.string()).default([]) }).strict(),
    z.union([z.string(), z.number().nullable()]),
    z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b"), v: z.enum(["x", "y"]) })]),
    z.tuple([z.string(), z.boolean()], z.number()),
    z.record(z.string(), z.unknown()),
    z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() })),
    z.string().pipe(z.string().uuid()),
    z.number().catch(0).readonly(),
  ];
  for (const s of plain) assert.ok(parsesSynchronously(s), JSON.stringify(s._zod.def.type));
});

test("a refinement, transform, codec, custom, lazy or promise anywhere keeps the async parse", () => {
  const awaited = [
    z.object({ word: z.string() }).refine(async (v) => v.word !== "bad"),
    z.object({ inner: z.object({ n: z.number().superRefine(() => undefined) }) }),
    z.array(z.string().transform((s) => s.length)),
    z.codec(z.string(), z.number(), { decode: Number, encode: String }),
    z.object({ d: z.instanceof(Date) }),
    z.object({ l: z.lazy(() => z.string()) }),
    z.promise(z.string()),
    z.union([z.string(), z.number().check(() => undefined)]),
    z.object({ n: z.number() }).optional().refine(() => true),
  ];
  for (const s of awaited) assert.not.ok(parsesSynchronously(s), JSON.stringify(s._zod.def.type));
});

test("a recursive schema is decided by its other parts, and the decision is kept", () => {
  const node: z.ZodType = z.object({ name: z.string(), get children() { return z.array(node); } });
  assert.ok(parsesSynchronously(node));
  const refined: z.ZodType = z.object({ name: z.string().refine(() => true), get children() { return z.array(refined); } });
  assert.not.ok(parsesSynchronously(refined));
  assert.not.ok(parsesSynchronously(refined));
});

test("what is parsed synchronously is what the async parse gives", async () => {
  const s = z.object({ name: z.string().min(2).trim(), n: z.number().int().default(3), kind: z.enum(["a", "b"]) }).strict();
  assert.ok(parsesSynchronously(s));
  for (const input of [{ name: "  ab ", kind: "a" }, { name: "x", kind: "c", extra: 1 }, { name: "abc", n: 1.5, kind: "b" }, null, "text"]) {
    const sync = s.safeParse(input);
    const async = await s.safeParseAsync(input);
    assert.equal(sync.success, async.success);
    assert.equal(sync.data, async.data);
    assert.equal(sync.error?.issues, async.error?.issues);
  }
});

test.run();
