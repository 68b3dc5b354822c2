// The type test of typed outputs: test/types/outputs.mts must compile with `tsc --noEmit`. Every
// `@ts-expect-error` line in it is a wrong output (ctx.finish, ctx.emitResult, return); tsc fails
// with "Unused '@ts-expect-error' directive" if one of them compiles, and with the error itself if
// a right output (a typed value, an explicit Outcome envelope, nothing) stops compiling.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const tsc = here("../../node_modules/typescript/bin/tsc");

test("wrong outputs fail to compile and right ones compile (tsc --noEmit over test/types/outputs.mts)", () => {
  const source = readFileSync(here("./types/outputs.mts"), "utf8");
  const expected = source.split("\n").filter((line) => line.trim().startsWith("// @ts-expect-error")).length;
  assert.ok(expected >= 13, `the type test holds its wrong outputs (${expected})`);
  const r = spawnSync(process.execPath, [tsc, "-p", here("./types/tsconfig.json")], { encoding: "utf8" });
  assert.is(r.stdout + r.stderr, "", "tsc reports nothing");
  assert.is(r.status, 0);
});

test.run();
