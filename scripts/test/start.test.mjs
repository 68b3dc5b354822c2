// Ctrl-C on `npm start`, as a terminal sends it: SIGINT to every process of the foreground process
// group (npm, scripts/start.mjs and the runtime), many times. Every run prints "brain: stopped", the
// launcher exits with the runtime's exit code 0 (npm's own code on SIGINT is npm's business), and
// the journal the runs wrote opens clean.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const TOKEN = "start-test-token";

function start(command, args, dataDir) {
  const child = spawn(command, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, BRAIN_PORT: "0", BRAIN_DATA_DIR: dataDir, BRAIN_TOKEN: TOKEN } });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  // "stopped" may be written by the runtime after npm itself exited: wait for the pipes to close.
  const closed = new Promise((resolve) => child.stdout.once("close", resolve));
  const listening = new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /brain listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearInterval(timer); resolve(m[1]); }
    }, 20);
    child.once("exit", () => setTimeout(() => { clearInterval(timer); reject(new Error(`exited before listening:\n${out}`)); }, 100));
  });
  return { child, out: () => out, exited, closed, listening };
}

async function ctrlCRuns(command, args, runs, checkExit) {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-start-"));
  try {
    for (let i = 0; i < runs; i++) {
      const s = start(command, args, dataDir);
      const url = await s.listening;
      const res = await fetch(`${url}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] }) });
      assert.is(res.status, 201);
      process.kill(-s.child.pid, "SIGINT");
      const exit = await s.exited;
      await s.closed;
      assert.match(s.out(), /brain: SIGINT, shutting down\n[^]*brain: stopped/, `run ${i}:\n${s.out()}`);
      if (checkExit) assert.equal(exit, { code: 0, signal: null }, `run ${i}:\n${s.out()}`);
      assert.match(s.out(), `session viewer: ${url}/ui\n`, `run ${i}`);
      assert.match(s.out(), `  export BRAIN_URL=${url}\n`, `run ${i}`);
    }
    const Database = createRequire(join(root, "runtime/package.json"))("better-sqlite3");
    const db = new Database(join(dataDir, "journal.sqlite"), { readonly: true });
    try {
      assert.is(db.pragma("integrity_check", { simple: true }), "ok");
    } finally {
      db.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test("Ctrl-C on node scripts/start.mjs (what npm start runs), 8 times: stopped, exit 0, journal intact", async () => {
  await ctrlCRuns(process.execPath, ["scripts/start.mjs"], 8, true);
});

test("Ctrl-C on npm start itself, 4 times: stopped every time", async () => {
  await ctrlCRuns(process.platform === "win32" ? "npm.cmd" : "npm", ["start", "--silent"], 4, false);
});

test("npm start passes flags on to brain serve and prints the /ui URL and an export BRAIN_TOKEN line that reads the token file", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-start-flags-"));
  try {
    const child = spawn(process.platform === "win32" ? "npm.cmd" : "npm", ["start", "--silent", "--", "--port", "0", "--journal", "memory", "--data-dir", dataDir], {
      cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"],
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BRAIN_"))),
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const closed = new Promise((resolve) => child.stdout.once("close", resolve));
    const deadline = Date.now() + 30_000;
    while (!/export BRAIN_TOKEN=.*\n/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    process.kill(-child.pid, "SIGINT");
    await closed;
    const url = /brain listening on (http:\/\/\S+)/.exec(out)?.[1];
    assert.ok(url, out);
    assert.match(out, `session viewer: ${url}/ui\n`);
    assert.match(out, "journal: memory");
    assert.match(out, `  export BRAIN_TOKEN=$(cat ${join(dataDir, "operator.token")})\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
