// `--nodes` at smoke size (6 sessions, one 200 ms block per load, lease 500 ms; the SQLite node and
// 1, 2 PostgreSQL nodes, each a process of its own, on a PostgreSQL server this test starts, with
// fsync off: the full run's is durable): the
// report's shape — every figure a number, the goals evaluated, the failover and a PostgreSQL restart
// (down 1 s) measured — with no timing
// assertions. Needs PostgreSQL's server binaries (.ci/run installs them), like the runtime's cluster tests.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runNodes } from "../src/main.ts";

test("--nodes (smoke): calls/s of the SQLite node and 1, 2 PostgreSQL nodes both ways, journal writes per call, CPU per call against the SQLite node's, failover, a PostgreSQL restart", async () => {
  const r = await runNodes({ smoke: true });
  assert.is(r.mode, "smoke");
  assert.equal(r.sections.map((s) => s.id), ["10", "11", "12"]);
  for (const s of r.sections) {
    assert.ok(s.figures.length > 0, `section ${s.id} has figures`);
    for (const f of s.figures) {
      assert.ok(Number.isFinite(f.value), `${s.id} ${f.name} is a number (${f.value}); notes: ${s.notes.join(" | ")}`);
      if (f.baseline) assert.ok(Number.isFinite(f.baseline.value) && Number.isFinite(f.ratio!), `${s.id} ${f.name} has a numeric baseline and ratio`);
    }
    assert.ok(!s.notes.some((n) => n.includes("FAILURES") || n.startsWith("configurations that failed")), `section ${s.id} ran every configuration: ${s.notes.join(" | ")}`);
  }
  for (const id of ["10", "11"]) {
    const s = r.sections.find((x) => x.id === id)!;
    const goals = s.figures.filter((f) => f.goal).map((f) => f.goal!.text);
    assert.equal(goals, ["PostgreSQL single node ≥ 50 % of the SQLite node", "CPU per call (node + PostgreSQL) ≤ 2× the SQLite node's", "2 nodes ≥ 1.5× one PostgreSQL node"]);
    assert.ok(s.figures.some((f) => f.name === "PostgreSQL, 2 nodes: cores used (nodes + PostgreSQL + hosts)" && f.baseline?.name === "1 node"), `${id}: 2 nodes' cores beside 1 node's`);
    for (const name of ["SQLite node", "PostgreSQL, 1 node", "PostgreSQL, 2 nodes"]) {
      for (const what of ["calls/s", "journal records per call", "journal transactions per call", "machine busy, every process"]) {
        assert.ok(s.figures.some((f) => f.name === `${name}: ${what}`), `${id}: ${name}: ${what}`);
      }
    }
    assert.ok(s.figures.some((f) => f.name === "PostgreSQL, 2 nodes: PostgreSQL write transactions per call"), `${id}: PostgreSQL write transactions per call`);
    assert.ok(s.figures.some((f) => f.name === "PostgreSQL, 2 nodes: CPU of the PostgreSQL server"), `${id}: PostgreSQL CPU`);
  }
  // Calls only: tool.call_started, tool.result, tool.finished per call (exactly: the window starts and ends between calls or not).
  const calls = r.sections.find((x) => x.id === "10")!;
  assert.ok(calls.notes.some((n) => n.startsWith("PostgreSQL, 2 nodes: ") && n.includes("xact_commit per call over the whole run")), "whole-run xact_commit per call");
  const records = calls.figures.find((f) => f.name === "PostgreSQL, 1 node: journal records per call")!.value;
  assert.ok(records > 2.5 && records < 3.5, `about 3 records per call (${records})`);
  const failover = r.sections.find((x) => x.id === "12")!;
  assert.equal(failover.figures.filter((f) => f.goal).map((f) => f.goal!.text), ["failover ≤ lease time + 1 s (1500 ms)"]);
  // Node 1 of 2 held 3 of the 6 sessions; each of them served a call through node 0 after the kill.
  assert.ok(failover.notes.some((n) => n.startsWith("3 sessions of the killed node") && n.includes("; 3 served a call")), failover.notes.join(" | "));
  // PostgreSQL stopped under load: clients got 503s, then a success once it was back.
  for (const name of ["PostgreSQL down 1000 ms: first 503 → first success", "PostgreSQL stopped → first 503 answered", "longest answer to a request sent while PostgreSQL was down"]) {
    assert.ok(failover.figures.some((f) => f.name === name), `outage figure ${name}: ${failover.notes.join(" | ")}`);
  }
  assert.ok(failover.notes.some((n) => n.startsWith("outage: ") && /503 × \d+/.test(n)), failover.notes.join(" | "));
});

test.run();
