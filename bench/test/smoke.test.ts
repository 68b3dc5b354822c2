// Runs the harness at a few iterations and checks the report's shape: every section present with
// finite numbers, ratios beside baselines, and the goals evaluated. No timing assertions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runBench, runSoak } from "../src/main.ts";
import { CONFIGS } from "../src/config.ts";
// @ts-ignore: a plain .mjs script without declarations.
import { rustUnavailable, skipNotice } from "../../scripts/rust-toolchain.mjs";

// The Rust component's goal needs the Rust build: on a machine without rustc that test is skipped, and counted.
const rustMissing: string | undefined = rustUnavailable();
if (rustMissing) skipNotice(1, "bench/test/smoke.test.ts", rustMissing);
let report: Awaited<ReturnType<typeof runBench>> | undefined;

test("the smoke-sized bench reports every section with numbers and evaluated goals", async () => {
  const r = (report = await runBench(CONFIGS.smoke));
  assert.equal(r.sections.map((s) => s.id), ["1", "2", "3", "4", "5", "6", "7", "8", "13", "14", "15", "16", "17", "18"]);
  for (const s of r.sections) {
    assert.ok(s.figures.length > 0, `section ${s.id} has figures`);
    for (const f of s.figures) {
      assert.ok(Number.isFinite(f.value), `${s.id} ${f.name} is a number (${f.value})`);
      if (f.baseline) assert.ok(Number.isFinite(f.baseline.value) && Number.isFinite(f.ratio!), `${f.name} has a numeric baseline and ratio`);
    }
  }
  const goals = r.sections.flatMap((s) => s.figures.filter((f) => f.goal).map((f) => f.goal!.text));
  for (const g of ["p50 ≤ 3× ws echo p50", "SDK host p50 ≤ 2× ws echo p50", "SDK host p50 ≤ 3× ws echo p50 (durable SQLite)", "≥ 20000 calls/s at 64 sessions", "≥ 10000 calls/s at 64 sessions", "≤ 1/5 of MCP Streamable HTTP p50", "≥ 10× MCP Streamable HTTP calls/s at 64"]) {
    assert.ok(goals.includes(g), `goal evaluated: ${g}`);
  }
  // Without rustc, section 5 says why Rust is not measured (the goal's own test below is skipped).
  const components = r.sections.find((s) => s.id === "5")!;
  if (rustMissing) assert.ok(components.notes.some((n) => n.includes("Rust component not built") && n.includes("not measured")), "section 5 says why Rust is not measured");
  // Issue 15's sections 7 and 8 (tiny: a 15-turn session, a ~2000-record history): their goals are evaluated.
  assert.ok(goals.includes("turn 15 / turn 10 bytes ≤ 1.5"), "journal growth goal evaluated");
  for (const g of ["restart time ≤ 3× the empty journal's", "RSS after restart ≤ 1.3× the empty journal's", "reading one old session ≤ 1.5× with the history as without"]) {
    assert.ok(goals.some((t) => t.startsWith(g)), `history goal evaluated: ${g}`);
  }
  // Issue 27's section 13 (2,000 sessions vs 1,000): both pages' goals evaluated, and it says its journal is smaller than the goal's.
  // Section 18 is the same on PostgreSQL: two more.
  assert.is(goals.filter((t) => t.startsWith("a page at 2,000 sessions ≤ 1.5× at 1,000")).length, 4, "listing goals evaluated (key and operator, SQLite and PostgreSQL)");
  assert.ok(r.sections.find((s) => s.id === "13")!.notes.some((n) => n.includes("instead of 1,000,000")), "section 13 says its journal is smaller than the goal's");
  // Issue 27's section 14: memory per record of resident sessions, a PostgreSQL node against a SQLite node.
  assert.ok(goals.includes("PostgreSQL ≤ 1.2× SQLite per record"), "record memory goal evaluated");
  // Issue 32's section 16: another key's round trip while one key is at its limits, against an idle server's.
  assert.ok(goals.includes("≤ 2× an idle server's"), "tenant limits goal evaluated");
  const limited = r.sections.find((s) => s.id === "16")!.notes.join(" ");
  assert.ok(/429 (sessions|journalBytes|streams)/.test(limited), "section 16 shows the noisy key refused");
  assert.not.ok(limited.includes("200 stream"), "the noisy key never got a stream over its limit");
  const history = r.sections.find((s) => s.id === "8")!;
  assert.ok(history.notes.some((n) => n.includes("instead of 1,000,000+")), "section 8 says its fixture is smaller than the goal's");
  for (const name of ["1", "2", "3", "7", "8", "13", "15", "16", "17", "18"]) assert.ok(r.sections.find((s) => s.id === name)!.figures.some((f) => f.baseline), `section ${name} has baselines`);
});

(rustMissing ? test.skip : test)("the Rust component is measured and its goal evaluated (smoke report)", () => {
  assert.ok(report, "the smoke bench ran");
  const components = report!.sections.find((s) => s.id === "5")!;
  assert.ok(components.figures.some((f) => f.name.startsWith("rust")), `Rust figures in section 5 (${components.notes.join("; ")})`);
  const goals = report!.sections.flatMap((s) => s.figures.filter((f) => f.goal).map((f) => f.goal!.text));
  assert.ok(goals.includes("warm p50 < 200 µs and ≤ 1.5× host (Rust, worker hop included)"), "component goal evaluated");
});

test("the soak (its own mode) reports turns/s per window, RSS and heap with evaluated goals", async () => {
  const saved = process.env.BENCH_SOAK_SECONDS;
  process.env.BENCH_SOAK_SECONDS = "2";
  try {
    const r = await runSoak({ smoke: true });
    assert.equal(r.sections.map((s) => s.id), ["9"]);
    const s = r.sections[0]!;
    for (const f of s.figures) assert.ok(Number.isFinite(f.value), `9 ${f.name} is a number (${f.value})`);
    assert.ok(s.figures.filter((f) => f.name.startsWith("turns/s, window")).length >= 2, "turns/s of several windows");
    const goals = s.figures.filter((f) => f.goal).map((f) => f.goal!.text);
    assert.equal(goals, ["last window's turns/s ≥ 80 % of the first's", "RSS at the end ≤ 1.5× RSS after the first window", "heap after deleting within 20 % of before the sessions"]);
    assert.ok(!s.notes.some((n) => n.includes("before it finished")), "the soak's child process finished");
  } finally {
    if (saved === undefined) delete process.env.BENCH_SOAK_SECONDS;
    else process.env.BENCH_SOAK_SECONDS = saved;
  }
});

test.run();
