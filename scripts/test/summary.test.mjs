// The root `npm test` must count every suite honestly: these pin how uvu and Deno output and exit
// codes become `N passed, N failed`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { closingLine, countSuite, parseDenoSummary, parseFailures, parseSkipNotices, parseUvuSummary } from "../test-summary.mjs";

const uvu = (total, passed, skipped) =>
  `\u001b[32m✔\u001b[39m  (3 / 3)\n\n  Total:     ${total}\n\u001b[32m  Passed:    ${passed}\u001b[39m\n  Skipped:   ${skipped}\n  Duration:  4.2ms\n\n`;

test("uvu summary with colour codes is parsed", () => {
  assert.equal(parseUvuSummary(uvu(7, 7, 0)), { passed: 7, failed: 0, skipped: 0 });
  assert.equal(parseUvuSummary(uvu(7, 5, 0)), { passed: 5, failed: 2, skipped: 0 });
});

test("uvu skipped tests are not in Total, so they do not hide failures", () => {
  assert.equal(parseUvuSummary(uvu(4, 2, 2)), { passed: 2, failed: 2, skipped: 2 });
});

test("several uvu runs in one script are summed", () => {
  assert.equal(parseUvuSummary(uvu(3, 3, 0) + uvu(2, 1, 1)), { passed: 4, failed: 1, skipped: 1 });
});

test("output without a summary is not a summary", () => {
  assert.is(parseUvuSummary("Error: Cannot find module 'x'\n"), undefined);
  assert.is(parseDenoSummary("error: Module not found\n"), undefined);
});

test("deno summary lines are parsed", () => {
  assert.equal(parseDenoSummary("running 3 tests\nok | 3 passed | 0 failed (20ms)\n"), { passed: 3, failed: 0, skipped: 0 });
  assert.equal(parseDenoSummary("FAILED | 4 passed | 1 failed | 2 ignored (1s)\n\nerror: Test failed\n"), { passed: 4, failed: 1, skipped: 2 });
});

test("exit codes override summaries that look green", () => {
  assert.equal(countSuite({ code: 1 }, undefined), { skipped: 0, passed: 0, failed: 1, note: "exit 1" });
  assert.equal(countSuite({ code: 0 }, undefined), { skipped: 0, passed: 1, failed: 0 });
  assert.equal(countSuite({ code: 1 }, { passed: 3, failed: 0 }).failed, 1);
  assert.equal(countSuite({ code: 1 }, { passed: 3, failed: 2, skipped: 1 }), { skipped: 1, passed: 3, failed: 2 });
  assert.equal(countSuite({ code: null, timedOut: true }, undefined).failed, 1);
  assert.equal(countSuite({ code: null, error: new Error("ENOENT") }, undefined).failed, 1);
});

test("skip notices are read from a suite's output, and the closing line says how many were skipped and why", () => {
  const out = "\u001b[90mfoo\u001b[39m\nbrain-test-skip: 6 Rust-built tests in runtime/test/component.test.ts: no rustc at /x; install it\nbrain-test-skip: 1 Rust-built test in bench/test/smoke.test.ts: no rustc at /x; install it\n";
  const notices = parseSkipNotices(out);
  assert.equal(notices, [
    { count: 6, where: "runtime/test/component.test.ts", reason: "no rustc at /x; install it" },
    { count: 1, where: "bench/test/smoke.test.ts", reason: "no rustc at /x; install it" },
  ]);
  assert.is(closingLine({ passed: 10, failed: 0, skipped: 0 }, []), "10 passed, 0 failed, 0 skipped");
  assert.is(closingLine({ passed: 10, failed: 1, skipped: 7 }, notices), "10 passed, 1 failed, 7 skipped (7 Rust-built: no rustc at /x; install it)");
  assert.is(closingLine({ passed: 10, failed: 0, skipped: 9 }, notices), "10 passed, 0 failed, 9 skipped (7 Rust-built: no rustc at /x; install it; 2 by test.skip/ignore in the suites)");
  assert.is(closingLine({ passed: 10, failed: 0, skipped: 1 }, []), "10 passed, 0 failed, 1 skipped (1 by test.skip/ignore in the suites)");
});

test("failing tests are named for the summary (CI keeps only the tail of the output)", () => {
  const uvuOut = "a.test.mjs\n\u001b[31m✘\u001b[39m ✔   (1 / 2)\n\n   FAIL  \"one thing works\"\n    numbers differ  (is)\n\n        ++2    (Expected)\n";
  assert.equal(parseFailures(uvuOut), ['a.test.mjs: "one thing works": numbers differ  (is)']);
  const denoOut = " ERRORS \n\nboom => ./test/x_test.ts:3:6\nerror: Error: no\n\n FAILURES \n\nboom => ./test/x_test.ts:3:6\n\nFAILED | 0 passed | 1 failed (5ms)\n";
  assert.equal(parseFailures(denoOut), ["./test/x_test.ts:3:6: boom"]);
  assert.equal(parseFailures("same names => ../conformance/deno/scenarios_test.ts:90:6\n"), ["../conformance/deno/scenarios_test.ts:90:6: same names"]);
  assert.equal(parseFailures(uvu(3, 3, 0)), []);
});

test.run();
