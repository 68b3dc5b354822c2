import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { SqliteStore } from "../src/journal/sqlite.ts";
import { MemoryStore } from "../src/journal/memory.ts";
import { WakeBatcher } from "../src/dispatch/wake.ts";

const rec = (sessionId: string, sequence: number): JournalRecord => ({ sessionId, sequence, at: Date.now(), type: "tool.returned", data: { callId: `${sessionId}:1` } });

test("sqlite: appends of one tick are one transaction, acknowledged after commit, and survive reopening", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "journal.sqlite");
    const store = new SqliteStore(file);
    assert.is(store.db.pragma("journal_mode", { simple: true }), "wal");
    assert.is(store.db.pragma("synchronous", { simple: true }), 1, "synchronous=NORMAL");
    let acked = 0;
    const appends = Array.from({ length: 10 }, (_, i) => store.append(rec("ses_a", i + 1)).then(() => acked++));
    assert.is(acked, 0, "nothing acknowledged before the commit");
    assert.is((store.db.prepare("SELECT count(*) AS n FROM journal").get() as { n: number }).n, 0, "not written yet in this tick");
    await Promise.all(appends);
    assert.is(store.stats.transactions, 1);
    assert.is(store.stats.records, 10);
    await store.append(rec("ses_a", 11));
    assert.is(store.stats.transactions, 2);
    await store.close();
    const reopened = new SqliteStore(file);
    const back = reopened.loadRecords();
    assert.equal(back.map((r) => r.sequence), Array.from({ length: 11 }, (_, i) => i + 1));
    assert.ok(back.every((r) => validate.JournalRecord.Check(r)));
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a duplicate sequence fails its whole batch and leaves the journal intact", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const store = new SqliteStore(join(dir, "j.sqlite"));
    await store.append(rec("ses_b", 1));
    const results = await Promise.allSettled([store.append(rec("ses_b", 2)), store.append(rec("ses_b", 1))]);
    assert.equal(results.map((r) => r.status), ["rejected", "rejected"]);
    assert.equal(store.loadRecords().map((r) => r.sequence), [1]);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a sequence that does not increase fails its batch, also across sessions in one batch", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const store = new SqliteStore(join(dir, "j.sqlite"));
    await Promise.all([store.append(rec("ses_h", 1)), store.append(rec("ses_i", 1))]);
    const bad = await Promise.allSettled([store.append(rec("ses_i", 2)), store.append(rec("ses_h", 3)), store.append(rec("ses_h", 2))]);
    assert.equal(bad.map((r) => r.status), ["rejected", "rejected", "rejected"]);
    await store.append(rec("ses_h", 2));
    assert.equal(store.loadSession("ses_h").map((r) => r.sequence), [1, 2]);
    assert.equal(store.loadSession("ses_i").map((r) => r.sequence), [1]);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: checkpoints run off the commit path (the database file grows while the store is open)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "j.sqlite");
    const store = new SqliteStore(file);
    assert.is(store.db.pragma("wal_autocheckpoint", { simple: true }), 0, "no checkpoint inside a commit");
    const before = statSync(file).size;
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.append({ ...rec("ses_k", i + 1), data: { callId: "ses_k:1", pad: "x".repeat(200) } as never })));
    let grown = false;
    for (let i = 0; i < 100 && !grown; i++) {
      await new Promise((r) => setTimeout(r, 50));
      grown = statSync(file).size > before;
    }
    assert.ok(grown, "the checkpoint thread copied the WAL into the database file");
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a journal in the earlier clustered layout is migrated into the log", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "j.sqlite");
    const old = new Database(file);
    old.exec("CREATE TABLE records (session_id TEXT NOT NULL, sequence INTEGER NOT NULL, at INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, sequence)) WITHOUT ROWID");
    const ins = old.prepare("INSERT INTO records VALUES (?, ?, ?, ?, ?)");
    for (const [s, q] of [["ses_m", 1], ["ses_l", 1], ["ses_m", 2]] as const) ins.run(s, q, 1, "tool.returned", JSON.stringify({ callId: `${s}:1` }));
    old.close();
    const store = new SqliteStore(file);
    assert.equal(store.loadSession("ses_m").map((r) => r.sequence), [1, 2]);
    assert.equal(store.loadRecords().length, 3);
    await store.append(rec("ses_m", 3));
    const dup = await Promise.allSettled([store.append(rec("ses_l", 1))]);
    assert.is(dup[0]!.status, "rejected", "migrated sequences still guard uniqueness");
    assert.equal(store.loadSession("ses_m").map((r) => r.sequence), [1, 2, 3]);
    assert.is(store.db.prepare("SELECT name FROM sqlite_master WHERE name = 'records'").get(), undefined);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("memory store: same group commit; committed records are frozen, never copied", async () => {
  const store = new MemoryStore();
  const r = rec("ses_c", 1);
  await store.append(r);
  assert.is(store.stats.transactions, 1);
  // Committed history is immutable: mutating the caller's object after append throws (strict mode).
  assert.throws(() => ((r.data as { callId: string }).callId = "mutated"), TypeError);
  assert.ok(Object.isFrozen(r) && Object.isFrozen(r.data));
  assert.is((store.loadRecords()[0]!.data as { callId: string }).callId, "ses_c:1");
  assert.is(store.loadSession("ses_c")[0], r, "kept by reference");
  await store.close();
});

test("memory store: a forgotten session is kept compacted and stays readable", async () => {
  const store = new MemoryStore();
  await Promise.all([store.append(rec("ses_d", 1)), store.append(rec("ses_d", 2)), store.append(rec("ses_e", 1))]);
  store.forget("ses_d");
  assert.equal(store.loadSession("ses_d").map((r) => r.sequence), [1, 2]);
  assert.equal(store.loadRecords().map((r) => `${r.sessionId}:${r.sequence}`).sort(), ["ses_d:1", "ses_d:2", "ses_e:1"]);
  await store.close();
});

test("sqlite: loadSession reads one session's records in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const store = new SqliteStore(join(dir, "j.sqlite"));
    await Promise.all([store.append(rec("ses_f", 1)), store.append(rec("ses_g", 1)), store.append(rec("ses_f", 2))]);
    store.forget("ses_f");
    assert.equal(store.loadSession("ses_f").map((r) => r.sequence), [1, 2]);
    assert.equal(store.loadSession("ses_none"), []);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("wake batching: fires once per window from the first notify, not extended by later ones", async () => {
  let fired = 0;
  const wake = new WakeBatcher(() => fired++, 5);
  wake.notify();
  wake.notify();
  wake.notify();
  await new Promise((r) => setTimeout(r, 30));
  assert.is(fired, 1, "three notifications in one window: one wake");
  // Notifying every ms for 60 ms: a window that extended would fire once at the end; ours fires repeatedly.
  fired = 0;
  const interval = setInterval(() => wake.notify(), 1);
  await new Promise((r) => setTimeout(r, 60));
  clearInterval(interval);
  const during = fired;
  await new Promise((r) => setTimeout(r, 20));
  wake.stop();
  assert.ok(during >= 2, `fired ${during} times during continuous notifications`);
});

test.run();
