import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { toOutcome, thrownOutcome, isEnvelope } from "../src/outcome.ts";

const code = (o: { status: string; error?: { code: string } }) => (o.status === "error" ? o.error!.code : o.status);

test("ordinary output becomes ok", async () => {
  assert.equal(await toOutcome({ a: 1 }, undefined), { status: "ok", value: { a: 1 } });
  assert.equal(await toOutcome(null, undefined), { status: "ok", value: null });
  assert.equal(await toOutcome("text", undefined), { status: "ok", value: "text" });
});

test("an explicit ok keeps its value, validated by the output schema", async () => {
  assert.equal(await toOutcome({ status: "ok", value: 3 }, z.number()), { status: "ok", value: 3 });
  assert.is(code(await toOutcome({ status: "ok", value: "3" }, z.number())), "invalid_output");
});

test("an error outcome keeps code, message, retryable and details", async () => {
  const o = { status: "error", error: { code: "not_found", message: "no such row", retryable: true, details: { id: 7 } } };
  assert.equal(await toOutcome(o, z.object({ value: z.string() })), o);
});

test("malformed envelopes become invalid_output", async () => {
  for (const bad of [
    { status: "ok" },
    { status: "error", error: { message: "no code" } },
    { status: "error" },
    { status: "timeout", value: 1 },
    { status: "cancelled", message: 3 },
    { status: "unknown", extra: true },
  ]) {
    const o = await toOutcome(bad, undefined);
    assert.is(code(o), "invalid_output", JSON.stringify(bad));
  }
});

test("timeout, cancelled and unknown envelopes pass unchanged", async () => {
  for (const o of [{ status: "timeout" }, { status: "cancelled", message: "stop" }, { status: "unknown" }]) assert.equal(await toOutcome(o, z.number()), o);
});

test("other status values are ordinary data", async () => {
  assert.equal(await toOutcome({ status: "pending", n: 1 }, undefined), { status: "ok", value: { status: "pending", n: 1 } });
  assert.equal(await toOutcome({ status: 1 }, undefined), { status: "ok", value: { status: 1 } });
  assert.is(isEnvelope({ status: "OK" }), false);
});

test("business data with a reserved status travels inside an explicit ok and is not inspected", async () => {
  const value = { status: "error", reason: "the order failed upstream" };
  assert.equal(await toOutcome({ status: "ok", value }, undefined), { status: "ok", value });
});

test("non-JSON values are rejected: undefined, NaN, Infinity, BigInt, Date, Map, class instances, functions, cycles", async () => {
  class Point { x = 1 }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  for (const bad of [undefined, NaN, Infinity, -Infinity, 10n, new Date(0), new Map(), new Set(), new Point(), () => 1, { nested: [1, undefined] }, { d: new Date(0) }, cyclic, { status: "ok", value: NaN }, { status: "error", error: { code: "x", message: "m", details: { when: new Date(0) } } }]) {
    const o = await toOutcome(bad, undefined);
    assert.is(code(o), "invalid_output", String(bad));
  }
});

test("output that fails the output schema is invalid_output with the issues in details", async () => {
  const o = await toOutcome({ value: 3 }, z.object({ value: z.string() }));
  assert.is(code(o), "invalid_output");
  const details = (o as { error: { details: { path: unknown[] }[] } }).error.details;
  assert.equal(details[0]!.path, ["value"]);
});

test("non-success outcomes skip output validation", async () => {
  const o = { status: "error", error: { code: "upstream", message: "down" } };
  assert.equal(await toOutcome(o, z.object({ value: z.string() })), o);
});

test("the final value must be JSON after output transforms", async () => {
  const toDate = z.string().transform((s) => new Date(s));
  assert.is(code(await toOutcome("2020-01-01", toDate)), "invalid_output");
  const upper = z.string().transform((s) => s.toUpperCase());
  assert.equal(await toOutcome("ab", upper), { status: "ok", value: "AB" });
});

test("output validation is async (parseAsync): async refinements run", async () => {
  const schema = z.string().refine(async (s) => s.length > 2, "too short");
  assert.is(code(await toOutcome("ab", schema)), "invalid_output");
  assert.equal(await toOutcome("abc", schema), { status: "ok", value: "abc" });
});

test("a thrown exception becomes tool_error keeping its message", () => {
  assert.equal(thrownOutcome(new Error("boom")), { status: "error", error: { code: "tool_error", message: "boom" } });
  assert.is(thrownOutcome("plain").error.code, "tool_error");
});

test.run();
