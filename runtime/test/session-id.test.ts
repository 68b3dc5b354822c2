// Session ids sort in the order one node made them, so a list ordered by (creation ms, id) shows
// sessions made in the same millisecond newest first (GET /v1/sessions).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SessionIds } from "../src/sessions/session-id.ts";

test("ids made in the same millisecond, across millisecond changes and after the clock steps back sort in the order they were made", () => {
  const times = [1000, 1000, 1000, 1001, 1001, 999, 999, 5000];
  const ids = new SessionIds(() => times.shift()!);
  const made = Array.from({ length: 8 }, () => ids.next());
  assert.equal([...made].sort(), made);
  assert.is(new Set(made).size, 8);
  for (const id of made) assert.match(id, /^ses_[0-9a-f]{24}$/);
  assert.ok(made[0]!.startsWith(`ses_${(1000).toString(16).padStart(12, "0")}`), made[0]);
  assert.ok(made[7]!.startsWith(`ses_${(5000).toString(16).padStart(12, "0")}`), made[7]);
});

test("two nodes making ids in the same millisecond do not collide (random start per millisecond)", () => {
  const a = new SessionIds(() => 7);
  const b = new SessionIds(() => 7);
  const fromA = new Set(Array.from({ length: 100 }, () => a.next()));
  const fromB = Array.from({ length: 100 }, () => b.next());
  assert.ok(fromB.every((id) => !fromA.has(id)));
});

test.run();
