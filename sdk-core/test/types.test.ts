// The type tests: test/types/outputs.mts (typed outputs) and test/types/factories.mts (required
// factory options) must compile with `tsc --noEmit`. Every `@ts-expect-error` line in them is a
// wrong output (ctx.finish, ctx.emitResult, return) or a factory call without its required
// options; tsc fails with "Unused '@ts-expect-error' directive" if one of them compiles, and with
// the error itself if a right one (a typed value, an explicit Outcome envelope, nothing, a call
// with its options) stops compiling. tool.test.ts checks the same calls at run time.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const tsc = here("../../node_modules/typescript/bin/tsc");

const expectedErrors = (file: string) => readFileSync(here(file), "utf8").split("\n").filter((line) => line.trim().startsWith("// @ts-expect-error")).length;

test("wrong outputs fail to compile and right ones compile; a factory with required options needs them (tsc --noEmit over test/types/outputs.mts and factories.mts)", () => {
  const expected = expectedErrors("./types/outputs.mts");
  assert.ok(expected >= 13, `the type test holds its wrong outputs (${expected})`);
  assert.ok(expectedErrors("./types/factories.mts") >= 5, "the type test holds its factory calls without required options");
  const r = spawnSync(process.execPath, [tsc, "-p", here("./types/tsconfig.json")], { encoding: "utf8" });
  assert.is(r.stdout + r.stderr, "", "tsc reports nothing");
  assert.is(r.status, 0);
});

test.run();
