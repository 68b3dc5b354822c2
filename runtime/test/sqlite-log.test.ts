import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { SqliteStore } from "../src/journal/sqlite.ts";
import { readLog, SqliteLog } from "../src/journal/sqlite-log.ts";
import type { LoggedRow } from "../src/journal/sqlite-log.ts";

const CHILD = new URL("./helpers/sqlite-log-child.mts", import.meta.url).pathname;

const rec = (sessionId: string, sequence: number, data: Record<string, unknown> = {}): JournalRecord => ({ sessionId, sequence, at: Date.now(), type: "tool.returned", data: { callId: `${sessionId}:1`, ...data } });
const row = (id: number, sequence = id): LoggedRow => ({ id, sessionId: "ses_l", sequence, at: 5, type: "tool.returned", prev: id === 1 ? null : id - 1, data: JSON.stringify({ callId: "ses_l:1", text: "a \"quoted\" ✓ line\n" }) });

/** Rows in the SQLite tables (what another connection sees), apart from the log. */
const tableRows = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM journal").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

const withDir = async (fn: (dir: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sqlite-log-"));
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test("log: lines read back as written, rows up to `after` skipped", () =>
  withDir(async (dir) => {
    const path = join(dir, "j-log");
    const log = new SqliteLog(path, false);
    log.append([row(1), row(2)]);
    log.append([row(3)]);
    log.close(false);
    assert.equal(readLog(path, 0), [row(1), row(2), row(3)]);
    assert.equal(readLog(path, 2), [row(3)]);
    assert.equal(readLog(join(dir, "absent"), 0), []);
  }));

test("log: a torn last line (a process killed inside its write) and anything out of step end the reading", () =>
  withDir(async (dir) => {
    const path = join(dir, "j-log");
    const log = new SqliteLog(path, false);
    log.append([row(1)]);
    log.append([row(2)]);
    log.close(false);
    const whole = readFileSync(path, "utf8");
    appendFileSync(path, whole.slice(0, 20)); // the start of a third line, no newline
    assert.equal(readLog(path, 0).map((r) => r.id), [1, 2]);
    writeFileSync(path, `${whole}not json\n${whole}`);
    assert.equal(readLog(path, 0).map((r) => r.id), [1, 2], "a garbled line ends it");
    writeFileSync(path, `${whole}${whole}`);
    assert.equal(readLog(path, 0).map((r) => r.id), [1, 2], "ids must continue the previous line's");
  }));

test("sqlite: a commit is acknowledged from the log before its rows are in the tables, and every read sees it", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const store = new SqliteStore(file);
    await store.append(rec("ses_a", 1));
    await Promise.all([store.append(rec("ses_a", 2)), store.append(rec("ses_b", 1))]);
    assert.is(tableRows(file), 0, "not in the tables yet");
    assert.equal(readLog(`${file}-log`, 0).map((r) => [r.sessionId, r.sequence]), [["ses_a", 1], ["ses_a", 2], ["ses_b", 1]]);
    assert.equal((await store.read("ses_a")).map((r) => r.sequence), [1, 2], "a read writes the waiting rows first");
    assert.is(tableRows(file), 3);
    await store.append(rec("ses_b", 2));
    // Written into the tables a few ms after the commit without any read (waited for, not timed).
    const until = Date.now() + 5000;
    while (tableRows(file) < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    assert.is(tableRows(file), 4);
    await store.close();
    assert.not.ok(existsSync(`${file}-log`), "a clean close leaves every row in the database and removes the log");
    const reopened = new SqliteStore(file);
    assert.equal((await reopened.read("ses_b")).map((r) => r.sequence), [1, 2]);
    await reopened.close();
  }));

/** Starts the child; resolves with its stdout lines so far whenever `until` says enough. */
function child(env: Record<string, string>, until: (lines: string[]) => boolean) {
  const proc = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", CHILD], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stderr.on("data", (d) => (err += d));
  const reached = new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (d) => {
      out += d;
      if (until(out.split("\n").slice(0, -1))) resolve();
    });
    proc.on("exit", (code) => reject(new Error(`child exited (${code}) early: ${err}`)));
  });
  const exited = new Promise((r) => proc.once("exit", r));
  return { reached, kill: async () => (proc.kill("SIGKILL"), await exited), lines: () => out.split("\n").slice(0, -1) };
}

test("sqlite: kill -9 while acknowledged rows are only in the log loses none of them", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const c = child({ FILE: file, MODE: "hold", COUNT: "40" }, (lines) => lines.includes("acked 40"));
    await c.reached;
    await c.kill();
    assert.ok(tableRows(file) <= 30, "the last group commit's rows are only in the log");
    assert.ok(statSync(`${file}-log`).size > 0);
    const store = new SqliteStore(file);
    const back = await store.read("ses_killed");
    assert.equal(back.map((r) => r.sequence), Array.from({ length: 40 }, (_, i) => i + 1));
    assert.equal(back[39]!.data, { callId: "ses_killed:1", n: 40 });
    assert.is(statSync(`${file}-log`).size, 0, "the log starts over once its rows are in the tables, on disk");
    await store.append(rec("ses_killed", 41));
    await store.close();
    const again = new SqliteStore(file);
    assert.is((await again.head("ses_killed"))!.lastSequence, 41);
    await again.close();
  }));

test("sqlite: kill -9 in the middle of steady commits loses no acknowledged record", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const c = child({ FILE: file, MODE: "stream" }, (lines) => lines.length >= 400);
    await c.reached;
    await c.kill();
    const acked = c.lines().length;
    const store = new SqliteStore(file);
    const back = await store.read("ses_killed");
    assert.ok(back.length >= acked, `${back.length} records back, ${acked} acknowledged`);
    assert.equal(back.map((r) => r.sequence), Array.from({ length: back.length }, (_, i) => i + 1), "no gap");
    await store.close();
  }));

test("sqlite: a second process on the same journal is refused while the first runs, and starts once it was killed", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const c = child({ FILE: file, MODE: "hold", COUNT: "12" }, (lines) => lines.includes("acked 12"));
    await c.reached;
    try {
      assert.throws(() => new SqliteStore(file), /journal .* is in use by another process/);
      assert.ok(statSync(`${file}-log`).size > 0, "the running process's log was left alone");
    } finally {
      await c.kill();
    }
    const store = new SqliteStore(file); // the kernel released the dead process's lock
    assert.is((await store.read("ses_killed")).length, 12);
    await store.close();
  }));

test("sqlite: a log that does not continue the tables (rows missing between them) stops the store from opening", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const store = new SqliteStore(file);
    await store.append(rec("ses_g", 1));
    await store.close();
    const log = new SqliteLog(`${file}-log`, false);
    log.append([{ ...row(5), sessionId: "ses_g", sequence: 5 }]);
    log.close(false);
    const refused = (): unknown => {
      try {
        new SqliteStore(file);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const first = refused() as { code?: string; message?: string } | undefined;
    assert.is(first?.code, "conflict");
    assert.match(first?.message ?? "", /starts at row 5 but the tables end at 1/);
    // The failed open let go of the journal's lock and connection: opening again meets the same damage, not "in use".
    assert.match((refused() as Error | undefined)?.message ?? "", /starts at row 5 but the tables end at 1/);
  }));

test("sqlite: the log starts over once it passes its size, every row still read back", () =>
  withDir(async (dir) => {
    const file = join(dir, "journal.sqlite");
    const store = new SqliteStore(file);
    const pad = "x".repeat(8 * 1024);
    // ~20 MiB through the log (it starts over past 16), a commit at a time, with the tables written between (as under load).
    for (let i = 1; i <= 2500; i++) {
      await store.append(rec("ses_big", i, { pad }));
      if (i % 50 === 0) await store.read("ses_big", i - 1);
    }
    assert.ok(statSync(`${file}-log`).size < 16 * 1024 * 1024 - 8 * 1024 * 50, `log ${statSync(`${file}-log`).size} bytes`);
    const back = await store.read("ses_big");
    assert.is(back.length, 2500);
    assert.ok(back.every((r, i) => r.sequence === i + 1 && (r.data as { pad: string }).pad === pad));
    await store.close();
  }));

test.run();
