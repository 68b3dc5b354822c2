#!/usr/bin/env node
// Root `npm test`: runs every suite in turn, streams its output live, keeps going after a failure,
// and ends with exactly one plain line `N passed, N failed, N skipped` summing all of them; when
// tests were skipped (Rust-built tests on a machine without rustc), the line says how many and why.
// Under CI=true (.ci/run) a skipped test counts as a failure: CI installs everything, so runs them all.
import { existsSync, readFileSync } from "node:fs";
import { testShards } from "./test-shards.mjs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseUvuSummary, parseDenoSummary, countSuite, parseSkipNotices, parseFailures, closingLine } from "./test-summary.mjs";
import { runSuite } from "./run-suite.mjs";

// Tools (uvu, deno) come from this checkout; the suites are discovered under BRAIN_TEST_ROOT when
// set, which is how scripts/test/runner.test.mjs runs this file against a synthetic repository.
const home = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = process.env.BRAIN_TEST_ROOT ?? home;
const SUITE_TIMEOUT_MS = Number(process.env.BRAIN_SUITE_TIMEOUT_MS ?? 5 * 60_000);
// The suites that pack and install every package, or run many real servers and a browser, take
// minutes on a loaded machine (runtime and conformance too: the conformance suite runs every subject kind, MCP included); the timeout is a guard against hangs, not a speed limit.
const LONG_SUITE_TIMEOUT_MS = Number(process.env.BRAIN_LONG_SUITE_TIMEOUT_MS ?? 15 * 60_000);

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

/** @typedef {{ name: string, cwd: string, command: string, args: string[], timeoutMs?: number, parse: (out: string) => ({passed:number, failed:number} | undefined) }} Suite */

/** Workspaces that were not run, and why; printed with the summary. */
const notices = [];

/** Suites in dependency order: contract drift first, then the repository checks, then every workspace, then Deno. */
function discoverSuites() {
  /** @type {Suite[]} */
  const suites = [];
  const pkg = readJson(join(root, "package.json"));

  // codegen --check is one pass/fail check, not a test count.
  if (pkg.scripts?.codegen && existsSync(join(root, "codegen/src/cli.ts"))) {
    suites.push({
      name: "codegen --check",
      cwd: root,
      command: "npm",
      args: ["run", "--silent", "codegen", "--", "--check"],
      parse: () => undefined,
    });
  }

  if (existsSync(join(root, "scripts/test"))) suites.push({
    name: "scripts",
    cwd: root,
    command: process.execPath,
    args: [join(home, "node_modules/uvu/bin.js"), "scripts/test", "\\.test\\.mjs$"],
    parse: parseUvuSummary,
  });

  // The packages installed as a user installs them (npm pack, npm install --offline in a temporary
  // project outside the repository, Deno projects of their own); before the workspaces, so on a
  // fresh clone the packs are made with no prior build, as the packages' prepack promises.
  if (existsSync(join(root, "scripts/install"))) suites.push({
    name: "install as a user",
    timeoutMs: LONG_SUITE_TIMEOUT_MS,
    cwd: root,
    command: process.execPath,
    args: [join(home, "node_modules/uvu/bin.js"), "scripts/install", "\\.test\\.mjs$"],
    parse: parseUvuSummary,
  });

  for (const workspace of pkg.workspaces ?? []) {
    const manifest = join(root, workspace, "package.json");
    if (!existsSync(manifest)) continue;
    if (!readJson(manifest).scripts?.test) continue;
    // git keeps no empty folders, so a workspace whose test/ is still empty has none in a fresh
    // clone; say so instead of letting uvu fail on a missing directory.
    if (!existsSync(join(root, workspace, "test"))) {
      notices.push(`${workspace}: has a test script but no test/ folder yet; nothing to run`);
      continue;
    }
    // A workspace may ask for its test files to be split into shards run side by side
    // (package.json "brainTest": {"shards": N}): its suite is mostly waiting (servers, subprocesses,
    // timeouts), so two uvu processes finish it in far less time on the same cores.
    const shards = testShards(join(root, workspace), readJson(manifest).brainTest?.shards ?? 1);
    const group = shards.map((pattern, i) => ({
      name: shards.length > 1 ? `${workspace} [${i + 1}/${shards.length}]` : workspace,
      cwd: join(root, workspace),
      command: "npm",
      args: ["run", "--silent", "test", ...(pattern === undefined ? [] : ["--", pattern])],
      timeoutMs: LONG_SUITE_TIMEOUT_MS,
      parse: parseUvuSummary,
    }));
    if (group.length > 1) suites.push(group);
    else suites.push({ ...group[0], timeoutMs: undefined });
  }

  // sdk-deno is not an npm workspace; it is tested by Deno itself, through its own "test" task
  // so that the flags live next to the suite they belong to.
  const denoJson = join(root, "sdk-deno/deno.json");
  if (existsSync(denoJson) && readJson(denoJson).tasks?.test) {
    // The task text runs in bash rather than `deno task`: inside a task, `deno` resolves to the npm
    // shim in node_modules/.bin, which Deno then executes as a script. The real binary comes first here.
    suites.push({
      name: "sdk-deno (deno test)",
      cwd: join(root, "sdk-deno"),
      command: "bash",
      args: ["-c", readJson(denoJson).tasks.test],
      env: { PATH: `${join(home, "node_modules/deno")}:${process.env.PATH}` },
      parse: parseDenoSummary,
    });
  }
  return suites;
}

/** Captures a suite's output to print as one block once it is over (a shard running beside another). */
function held() {
  let text = "";
  const sink = { write: (chunk) => ((text += chunk), true) };
  return { out: { stdout: sink, stderr: sink }, text: () => text };
}

function header(suite) {
  const where = relative(root, suite.cwd) || ".";
  const command = suite.command === process.execPath ? "node" : suite.command.startsWith(home) ? relative(home, suite.command) : suite.command;
  // A shard's pattern lists its files: say how many instead of printing it.
  const args = suite.args.map((a) => (a.startsWith("^(?:") ? `<${a.split("|").length} files>` : a));
  return `\n=== ${suite.name} (in ${where}: ${[command, ...args].join(" ")})`;
}

async function run(suite, out) {
  const timeoutMs = suite.timeoutMs ?? (suite.name === "runtime" || suite.name === "conformance" ? LONG_SUITE_TIMEOUT_MS : SUITE_TIMEOUT_MS);
  const r = await runSuite(suite, timeoutMs, out);
  const lines = [];
  if (r.timedOut) lines.push(`!!! ${suite.name}: killed after ${timeoutMs} ms`);
  if (r.error) lines.push(`!!! ${suite.name}: could not start: ${r.error.message}`);
  return { result: { name: suite.name, ...countSuite(r, suite.parse(r.output)), skips: parseSkipNotices(r.output), failures: parseFailures(r.output) }, lines };
}

const suites = discoverSuites();
const results = [];
for (const step of suites) {
  if (!Array.isArray(step)) {
    console.log(header(step));
    const { result, lines } = await run(step);
    for (const l of lines) console.log(l);
    results.push(result);
    continue;
  }
  // Shards side by side: the first streams live, the others print as one block each when all are over.
  const holds = step.map((_, i) => (i === 0 ? undefined : held()));
  for (const [i, suite] of step.entries()) if (i > 0) console.log(`${header(suite)}: running beside ${step[0].name}; its output follows it`);
  console.log(header(step[0]));
  const done = await Promise.all(step.map((suite, i) => run(suite, holds[i]?.out)));
  for (const [i, { result, lines }] of done.entries()) {
    if (i > 0) {
      console.log(header(step[i]));
      process.stdout.write(holds[i].text());
    }
    for (const l of lines) console.log(l);
    results.push(result);
  }
}

const ci = process.env.CI === "true";
let passed = 0;
let failed = 0;
let skipped = 0;
const skips = [];
console.log("\n=== summary");
for (const notice of notices) console.log(`  --   ${notice}`);
for (const r of results) {
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
  skips.push(...r.skips);
  const skippedText = r.skipped ? `, ${r.skipped} skipped` : "";
  console.log(`  ${r.failed || (ci && r.skipped) ? "FAIL" : "ok  "} ${r.name}: ${r.passed} passed, ${r.failed} failed${skippedText}${r.note ? ` (${r.note})` : ""}`);
}
for (const r of results) for (const f of r.failures) console.log(`  fail ${r.name}: ${f}`);
for (const s of skips) console.log(`  skip ${s.count} in ${s.where}: ${s.reason}`);
if (ci && skipped) {
  console.log(`!!! CI=true: ${skipped} skipped test${skipped === 1 ? "" : "s"} count as failed (CI must run every test; .ci/run installs what they need)`);
  failed += skipped;
}
console.log(closingLine({ passed, failed, skipped }, skips));
process.exitCode = failed ? 1 : 0;
