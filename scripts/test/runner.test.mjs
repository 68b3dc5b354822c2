// Runs the real root runner (scripts/test.mjs) against a synthetic repository with passing,
// failing and summary-less suites, and checks the one line it must end with.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const home = join(dirname(fileURLToPath(import.meta.url)), "../..");
const uvuTest = "node ../node_modules/uvu/bin.js test";

function fakeRepo(workspaces, { deno } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "brain-runner-"));
  symlinkSync(join(home, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "fake", private: true, workspaces: Object.keys(workspaces) }));
  for (const [name, { script, tests }] of Object.entries(workspaces)) {
    mkdirSync(join(dir, name, tests ? "test" : ""), { recursive: true });
    writeFileSync(join(dir, name, "package.json"), JSON.stringify({ name, private: true, type: "module", scripts: script ? { test: script } : {}, ...(workspaces[name].brainTest ? { brainTest: workspaces[name].brainTest } : {}) }));
    for (const [file, body] of Object.entries(tests ?? {})) writeFileSync(join(dir, name, "test", file), body);
  }
  if (deno) {
    mkdirSync(join(dir, "sdk-deno"));
    writeFileSync(join(dir, "sdk-deno/deno.json"), JSON.stringify({ tasks: { test: "deno test --allow-all" } }));
    writeFileSync(join(dir, "sdk-deno/a_test.ts"), deno);
  }
  return dir;
}

function runRunner(dir, env = {}) {
  const result = spawnSync(process.execPath, [join(home, "scripts/test.mjs")], {
    cwd: dir,
    // CI unset unless a test sets it: .ci/run exports CI=true, which makes a skip a failure.
    env: { ...process.env, CI: "", BRAIN_TEST_ROOT: dir, ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  const lines = result.stdout.trimEnd().split("\n");
  return { status: result.status, last: lines.at(-1), stdout: result.stdout, endsWithNewlineOnly: result.stdout.endsWith(`${lines.at(-1)}\n`) };
}

const passing = (n) => `import { test } from "uvu";\n${Array.from({ length: n }, (_, i) => `test("p${i}", () => {});`).join("\n")}\ntest.run();\n`;
const failing = `import { test } from "uvu";\nimport * as assert from "uvu/assert";\ntest("ok", () => {});\ntest("bad", () => { assert.is(1, 2); });\ntest.skip("skipped", () => {});\ntest.run();\n`;

test("sums passing, failing, summary-less and deno suites into one last line, exit 1", () => {
  const dir = fakeRepo({
    alpha: { script: uvuTest, tests: { "a.test.mjs": passing(2) } },
    beta: { script: uvuTest, tests: { "b.test.mjs": failing } },
    gamma: { script: "node -e \"process.exit(2)\"", tests: {} },
    delta: {},
    epsilon: { script: uvuTest },
  }, { deno: `Deno.test("d1", () => {});\nDeno.test("d2", () => { throw new Error("no"); });\n` });
  try {
    const run = runRunner(dir);
    // alpha 2+0, beta 1+1, gamma 0+1, delta and epsilon not run, deno 1+1
    assert.is(run.last, "4 passed, 3 failed, 1 skipped (1 by test.skip/ignore in the suites)", run.stdout);
    assert.ok(run.endsWithNewlineOnly, "something was printed after the summary line");
    assert.is(run.status, 1);
    assert.ok(run.stdout.includes("=== alpha") && run.stdout.includes("=== beta") && run.stdout.includes("=== sdk-deno"), "a suite header is missing");
    assert.not.ok(run.stdout.includes("=== delta"), "a workspace without a test script was run");
    assert.not.ok(run.stdout.includes("=== epsilon"), "a workspace without a test/ folder was run");
    assert.ok(run.stdout.includes("epsilon: has a test script but no test/ folder"), "the missing test/ folder was not reported");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("all green exits 0", () => {
  const dir = fakeRepo({ alpha: { script: uvuTest, tests: { "a.test.mjs": passing(3) } } });
  try {
    const run = runRunner(dir);
    assert.is(run.last, "3 passed, 0 failed, 0 skipped", run.stdout);
    assert.is(run.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A suite that skips its Rust-built tests the way the real ones do (scripts/rust-toolchain.mjs).
const rustSkipping = `import { test } from "uvu";\nimport { skipNotice } from "${join(home, "scripts/rust-toolchain.mjs")}";\nskipNotice(2, "alpha/test/r.test.mjs", "no rustc at /nonexistent; install Debian's rustc");\ntest("plain", () => {});\ntest.skip("rust 1", () => {});\ntest.skip("rust 2", () => {});\ntest.run();\n`;
const denoIgnoring = `Deno.test("d1", () => {});\nDeno.test({ name: "d2", ignore: true, fn: () => {} });\n`;

test("skipped tests are counted and explained in the closing line, and the run still passes", () => {
  const dir = fakeRepo({ alpha: { script: uvuTest, tests: { "r.test.mjs": rustSkipping } } }, { deno: denoIgnoring });
  try {
    const run = runRunner(dir);
    assert.is(run.last, "2 passed, 0 failed, 3 skipped (2 Rust-built: no rustc at /nonexistent; install Debian's rustc; 1 by test.skip/ignore in the suites)", run.stdout);
    assert.is(run.status, 0);
    assert.match(run.stdout, "skip 2 in alpha/test/r.test.mjs: no rustc at /nonexistent");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("under CI=true a skipped test is a failure", () => {
  const dir = fakeRepo({ alpha: { script: uvuTest, tests: { "r.test.mjs": rustSkipping } } });
  try {
    const run = runRunner(dir, { CI: "true" });
    assert.is(run.last, "1 passed, 2 failed, 2 skipped (2 Rust-built: no rustc at /nonexistent; install Debian's rustc)", run.stdout);
    assert.is(run.status, 1);
    assert.match(run.stdout, "CI=true: 2 skipped tests count as failed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a workspace with brainTest.shards runs its files in shards side by side, each file once, and sums them", () => {
  // Each file appends its name to a log: every file must run exactly once across the shards.
  const logged = (name, n) => `import { test } from "uvu";\nimport { appendFileSync } from "node:fs";\nappendFileSync(process.env.SHARD_LOG, "${name}\\n");\n${Array.from({ length: n }, (_, i) => `test("${name}${i}", () => {});`).join("\n")}\ntest.run();\n`;
  const dir = fakeRepo({
    alpha: {
      script: uvuTest,
      brainTest: { shards: 2 },
      tests: { "a.test.mjs": logged("a", 1), "b.test.mjs": logged("b", 2), "c.test.mjs": logged("c", 3), "shard-weights.json": JSON.stringify({ "a.test.mjs": 5, "b.test.mjs": 4, "c.test.mjs": 1 }) },
    },
  });
  const log = join(dir, "shards.log");
  writeFileSync(log, "");
  try {
    const run = runRunner(dir, { SHARD_LOG: log });
    assert.is(run.last, "6 passed, 0 failed, 0 skipped", run.stdout);
    assert.is(run.status, 0);
    assert.ok(run.stdout.includes("=== alpha [1/2]") && run.stdout.includes("=== alpha [2/2]"), run.stdout);
    assert.match(run.stdout, /ok {3}alpha \[1\/2\]: \d passed/);
    // a (5) alone in one shard, b and c (4 + 1) in the other
    assert.match(run.stdout, /alpha \[\d\/2\]: 1 passed/);
    assert.match(run.stdout, /alpha \[\d\/2\]: 5 passed/);
    assert.equal(readFileSync(log, "utf8").trim().split("\n").sort(), ["a", "b", "c"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
