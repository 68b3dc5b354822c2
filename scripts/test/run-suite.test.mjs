// The root runner's process handling, against real subprocesses.
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runSuite } from "../run-suite.mjs";

const sink = () => new Writable({ write(_chunk, _enc, cb) { cb(); } });
const quiet = { stdout: sink(), stderr: sink() };
const node = (code) => ({ command: process.execPath, args: ["-e", code], cwd: process.cwd() });
// A killed orphan may linger as a zombie until some init reaps it; a zombie runs nothing.
const alive = (pid) => {
  try { process.kill(pid, 0); } catch { return false; }
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8")); } catch { return false; }
};

test("output and exit code of a suite are captured", async () => {
  const run = await runSuite(node(`console.log("hello"); console.error("warn"); process.exit(3)`), 30_000, quiet);
  assert.is(run.code, 3);
  assert.ok(run.output.includes("hello") && run.output.includes("warn"));
  assert.is(run.timedOut, false);
});

test("a hanging suite is killed after its time limit, with the children it spawned", async () => {
  // The suite prints its grandchild's pid, then both hang forever.
  const code = `const c = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    console.log("child=" + c.pid); setInterval(() => {}, 1000);`;
  const started = Date.now();
  const run = await runSuite(node(code), 1_500, quiet);
  assert.is(run.timedOut, true);
  assert.ok(Date.now() - started < 20_000, "kill took far too long");
  const pid = Number(/child=(\d+)/.exec(run.output)?.[1]);
  assert.ok(pid > 0, "the suite did not report its child");
  await new Promise((r) => setTimeout(r, 200));
  assert.is(alive(pid), false, "the grandchild survived the kill");
});

test("a command that cannot start is reported, not thrown", async () => {
  const run = await runSuite({ command: "/nonexistent/brain-suite", args: [], cwd: process.cwd() }, 5_000, quiet);
  assert.ok(run.error);
});

test.run();
