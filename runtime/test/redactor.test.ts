// The Redactor's two walks: `redact` (answers, logs) leaves what it is given as it is; `redactFrozen`
// (a journal record's data) also freezes every object and array of what it returns, in one walk.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Redactor, REDACTED } from "../src/redact.ts";

const SECRET = "sk-live-0123456789abcdef";

function deeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

test("without a secret, redactFrozen leaves the data to the journal's own freeze", () => {
  const data = { a: { b: [1, "two"] } };
  assert.is(new Redactor().redactFrozen(data), undefined);
  assert.not.ok(Object.isFrozen(data));
});

test("data without a secret comes back as itself, frozen to the last array", () => {
  const r = new Redactor();
  r.add(SECRET);
  const data = { callId: "ses_a:1", outcome: { status: "ok", value: { list: [{ x: 1 }, "plain"] } } };
  const out = r.redactFrozen(data);
  assert.is(out, data);
  assert.ok(deeplyFrozen(out));
});

test("a secret anywhere, key or value, is redacted in a frozen copy; what the caller gave is not frozen or changed", () => {
  const r = new Redactor();
  r.add(SECRET);
  const data = { outcome: { status: "ok", value: { echoed: `Bearer ${SECRET}`, [SECRET]: 1, list: ["x", SECRET] } }, other: { kept: true } };
  const out = r.redactFrozen(data)!;
  assert.is.not(out, data);
  assert.ok(deeplyFrozen(out));
  assert.not.ok(JSON.stringify(out).includes(SECRET));
  assert.ok(JSON.stringify(out).includes(REDACTED));
  assert.is(out.other, data.other, "a part without a secret is shared, not copied");
  assert.not.ok(Object.isFrozen(data) || Object.isFrozen(data.outcome), "the caller's objects that held a secret stay its own");
  assert.ok(JSON.stringify(data).includes(SECRET));
});

test("a part frozen before a secret was known is still read: it is copied without the secret", () => {
  const r = new Redactor();
  const shared = Object.freeze({ note: `token ${SECRET}` });
  assert.is(r.redactFrozen({ shared }), undefined);
  r.add(SECRET);
  const out = r.redactFrozen({ shared })!;
  assert.is.not(out.shared, shared);
  assert.is(out.shared.note, `token ${REDACTED}`);
  assert.ok(deeplyFrozen(out));
});

test("redact never freezes what it is given or returns", () => {
  const r = new Redactor();
  r.add(SECRET);
  const plain = { a: { b: ["c"] } };
  assert.is(r.redact(plain), plain);
  assert.not.ok(Object.isFrozen(plain) || Object.isFrozen(plain.a));
  const withSecret = r.redact({ a: SECRET, b: { c: 1 } });
  assert.not.ok(Object.isFrozen(withSecret));
});

test.run();
