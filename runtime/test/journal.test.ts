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

/** Every record of every session, session by session (what the store holds). */
const everything = async (store: { sessionIds(): string[]; read(id: string): Promise<JournalRecord[]> }) => (await Promise.all(store.sessionIds().map((id) => store.read(id)))).flat();

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
    const back = (await everything(reopened));
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
    assert.equal((await everything(store)).map((r) => r.sequence), [1]);
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

test("sqlite: under steady writes the WAL starts over instead of growing (the checkpoint thread restarts it)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "j.sqlite");
    const store = new SqliteStore(file);
    // One commit (one WAL frame of 4 KiB) after another, with no pause for a checkpoint to catch up.
    let i = 0;
    const write = () => store.append({ ...rec("ses_w", ++i), data: { callId: "ses_w:1", i } as never });
    // Long enough for the checkpoint thread to start and restart the WAL a few times.
    for (const until = Date.now() + 1500; Date.now() < until; ) await write();
    const before = statSync(`${file}-wal`).size;
    // 10,000 more frames are ~40 MiB more WAL if it never starts over.
    for (let n = 0; n < 10_000; n++) await write();
    const grown = statSync(`${file}-wal`).size - before;
    assert.ok(grown < 20 * 2 ** 20, `the WAL reused its blocks (grew ${(grown / 2 ** 20).toFixed(1)} MiB over 10,000 commits)`);
    assert.equal((await store.read("ses_w", i - 2)).map((r) => r.sequence), [i - 1, i]);
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
    assert.equal((await store.read("ses_m")).map((r) => r.sequence), [1, 2]);
    assert.equal((await everything(store)).length, 3);
    await store.append(rec("ses_m", 3));
    const dup = await Promise.allSettled([store.append(rec("ses_l", 1))]);
    assert.is(dup[0]!.status, "rejected", "migrated sequences still guard uniqueness");
    assert.equal((await store.read("ses_m")).map((r) => r.sequence), [1, 2, 3]);
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
  assert.is(((await everything(store))[0]!.data as { callId: string }).callId, "ses_c:1");
  assert.is((await store.read("ses_c"))[0], r, "kept by reference");
  await store.close();
});

test("memory store: a deleted session is kept compacted and stays readable", async () => {
  const store = new MemoryStore();
  await Promise.all([store.append(rec("ses_d", 1)), store.append({ sessionId: "ses_d", sequence: 2, at: 1, type: "session.deleted", data: {} }), store.append(rec("ses_e", 1))]);
  assert.ok((await store.head("ses_d"))!.deleted);
  assert.equal((await store.read("ses_d")).map((r) => r.sequence), [1, 2]);
  assert.equal((await everything(store)).map((r) => `${r.sessionId}:${r.sequence}`).sort(), ["ses_d:1", "ses_d:2", "ses_e:1"]);
  await store.close();
});

test("sqlite: read returns one session's records in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const store = new SqliteStore(join(dir, "j.sqlite"));
    await Promise.all([store.append(rec("ses_f", 1)), store.append(rec("ses_g", 1)), store.append(rec("ses_f", 2))]);
    assert.equal((await store.read("ses_f")).map((r) => r.sequence), [1, 2]);
    assert.equal((await store.read("ses_none")), []);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `n` sessions written round-robin, `per` records each: every session's rows are spread over the whole log. */
async function interleaved(store: SqliteStore | MemoryStore, n: number, per: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `ses_${String(i).padStart(4, "0")}`);
  for (let q = 1; q <= per; q++) {
    await Promise.all(ids.map((id) => store.append(q === 1 ? created(id) : rec(id, q))));
  }
  return ids;
}

const created = (sessionId: string): JournalRecord => ({ sessionId, sequence: 1, at: Date.now(), type: "session.created", data: { model: { provider: "scripted", script: [] }, tools: [] } });

for (const kind of ["sqlite", "memory"] as const) {
  test(`${kind}: reading one session visits only its own rows (plus at most one mark's distance), wherever they lie in the log`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
    try {
      const store = kind === "sqlite" ? new SqliteStore(join(dir, "j.sqlite")) : new MemoryStore();
      const ids = await interleaved(store, 50, 200);
      const before = store.stats.rowsRead;
      const all = (await store.read(ids[3]!));
      assert.equal(all.map((r) => r.sequence), Array.from({ length: 200 }, (_, i) => i + 1));
      assert.ok(all.every((r) => r.sessionId === ids[3]));
      assert.is(store.stats.rowsRead - before, 200, "a whole-session read visits exactly its 200 rows, not the 10,000 of the log");
      const mid = store.stats.rowsRead;
      assert.equal((await store.read(ids[7]!, 100, 110)).map((r) => r.sequence), [101, 102, 103, 104, 105, 106, 107, 108, 109, 110]);
      assert.ok(store.stats.rowsRead - mid <= 10 + 64, `a range read visits ${store.stats.rowsRead - mid} rows`);
      const one = store.stats.rowsRead;
      assert.equal((await store.read(ids[9]!, 0, 1)).map((r) => r.type), ["session.created"]);
      assert.ok(store.stats.rowsRead - one <= 64, "the first record is found from the nearest mark");
      assert.equal((await store.read("ses_none")), []);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${kind}: heads follow commits (open calls, model requests, turns, deletion) and name the sessions with open work`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
    try {
      const store = kind === "sqlite" ? new SqliteStore(join(dir, "j.sqlite")) : new MemoryStore();
      const at = Date.now();
      const one = (sessionId: string, sequence: number, type: JournalRecord["type"], data: unknown) => store.append({ sessionId, sequence, at, type, data } as JournalRecord);
      await Promise.all([store.append(created("ses_busy")), store.append(created("ses_idle")), store.append(created("ses_gone"))]);
      await Promise.all([
        one("ses_busy", 2, "message.user", { text: "hi", activation: 1 }),
        one("ses_busy", 3, "turn.started", { activation: 1, cause: "message" }),
        one("ses_busy", 4, "model.request", { conversation: { through: 3 } }),
        one("ses_idle", 2, "message.user", { text: "hi", activation: 1 }),
        one("ses_gone", 2, "session.deleted", {}),
      ]);
      const busy = (await store.head("ses_busy"))!;
      assert.equal({ last: busy.lastSequence, activations: busy.activations, models: busy.modelRequests, open: busy.openModelRequests, turn: busy.turnOpen }, { last: 4, activations: 1, models: 1, open: 1, turn: true });
      assert.ok((await store.head("ses_gone"))!.deleted);
      assert.is((await store.head("ses_none")), undefined);
      assert.equal((await store.openWork()), ["ses_busy"]);
      assert.equal(new Set(store.sessionIds()), new Set(["ses_busy", "ses_idle", "ses_gone"]));
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("sqlite: a store opened after a crash (directory not written since) replays the log after it and loads only the heads it needs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "j.sqlite");
    const first = new SqliteStore(file);
    const ids = await interleaved(first, 20, 10);
    await first.close();
    // A second writer that never closes: like a process killed before its directory was written.
    const crashed = new SqliteStore(file);
    await crashed.append({ sessionId: ids[0]!, sequence: 11, at: 1, type: "tool.call_started", data: { callId: `${ids[0]}:11`, tool: "t", modelCallId: "c", input: null, placement: { kind: "host", hostId: "h" }, activation: 1, deadlineAt: null } } as JournalRecord);
    // What the process's death would release: its connection and its lock (sqlite.ts holdLock).
    crashed.db.close();
    (crashed as unknown as { lock: Database.Database }).lock.close();
    const reopened = new SqliteStore(file);
    assert.equal((await reopened.openWork()), [ids[0]], "the open call written after the directory is found");
    assert.is((await reopened.head(ids[0]!))!.lastSequence, 11);
    assert.is(reopened.stats.headsLoaded, 1, "only the replayed session's head was read from the directory");
    assert.is(reopened.stats.rowsRead, 0, "no record was read back");
    const dup = await Promise.allSettled([reopened.append(rec(ids[0]!, 11))]);
    assert.is(dup[0]!.status, "rejected", "the replayed tail still guards the order");
    await reopened.append(rec(ids[0]!, 12));
    assert.equal((await reopened.read(ids[0]!)).map((r) => r.sequence), Array.from({ length: 12 }, (_, i) => i + 1));
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a journal of the earlier log layout (no prev, marks or directory) is migrated once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "j.sqlite");
    const old = new Database(file);
    old.exec("CREATE TABLE journal (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, sequence INTEGER NOT NULL, at INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)");
    const ins = old.prepare("INSERT INTO journal (session_id, sequence, at, type, data) VALUES (?, ?, ?, ?, ?)");
    for (let q = 1; q <= 130; q++) for (const s of ["ses_x", "ses_y"]) ins.run(s, q, 1, q === 1 ? "session.created" : "tool.returned", JSON.stringify(q === 1 ? { model: { provider: "scripted", script: [] }, tools: [] } : { callId: `${s}:1` }));
    old.close();
    const store = new SqliteStore(file);
    assert.equal((await store.read("ses_y")).map((r) => r.sequence), Array.from({ length: 130 }, (_, i) => i + 1));
    assert.equal((await store.read("ses_x", 64, 66)).map((r) => r.sequence), [65, 66]);
    assert.is((await store.head("ses_x"))!.lastSequence, 130);
    await store.append(rec("ses_x", 131));
    await store.close();
    const again = new SqliteStore(file);
    assert.is((await again.head("ses_x"))!.lastSequence, 131);
    assert.is((await again.read("ses_x", 130)).length, 1);
    await again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a session's reads use primary keys only (EXPLAIN QUERY PLAN: no scan of the log)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const store = new SqliteStore(join(dir, "j.sqlite"));
    const plan = (sql: string) => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 2).slice(0) as Array<{ detail: string }>).map((r) => r.detail).join("; ");
    assert.match(plan("SELECT session_id, sequence, at, type, data, prev FROM journal WHERE id = ? AND ?"), /USING INTEGER PRIMARY KEY/);
    assert.match(plan("SELECT id FROM marks WHERE session_id = ? AND sequence >= ? ORDER BY sequence LIMIT 1"), /SEARCH marks USING PRIMARY KEY/);
    assert.match(plan("SELECT * FROM sessions WHERE session_id = ? AND ?"), /SEARCH sessions USING INDEX sqlite_autoindex_sessions_1/);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const kind of ["memory", "sqlite"] as const) {
  test(`${kind}: what a commit's waiters append is committed right after them, before the next turn of the event loop, once per commit`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
    const store = kind === "memory" ? new MemoryStore() : new SqliteStore(join(dir, "journal.sqlite"));
    try {
      await store.append(rec("ses_f", 1));
      // Out of that commit's waiters (whose appends it would commit at once).
      await new Promise((r) => setTimeout(r, 1));
      const before = store.stats.transactions;
      let immediate = false;
      // A waiter of the first commit appends (as the next call of a sequential loop does); so does a later one.
      const first = store.append(rec("ses_f", 2));
      const second = first.then(() => {
        setImmediate(() => (immediate = true));
        return store.append(rec("ses_f", 3));
      });
      const third = second.then(() => store.append(rec("ses_f", 4)));
      await second;
      assert.is(immediate, false, "record 3 was committed before a setImmediate queued with its append ran");
      assert.is(store.stats.transactions, before + 2);
      await third;
      assert.is(immediate, true, "record 4, appended by a waiter of the follow-up commit, waits for the setImmediate window");
      assert.is(store.stats.transactions, before + 3);
      assert.equal((await store.read("ses_f")).map((r) => r.sequence), [1, 2, 3, 4]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("wake batching: fires once per window from the first notify, not extended by later ones", async () => {
  let fired = 0;
  const wake = new WakeBatcher(() => fired++, 5);
  wake.notify();
  wake.notify();
  wake.notify();
  await new Promise((r) => setTimeout(r, 30));
  assert.is(fired, 1, "three notifications in one window: one wake");
  // Notifying every ms: a window that extended would not fire until the notifications stop; ours fires
  // again and again meanwhile. Waited for (not a fixed 60 ms, which a loaded machine can spend
  // without running a single timer), the notifications going on until then.
  fired = 0;
  const interval = setInterval(() => wake.notify(), 1);
  for (const until = Date.now() + 10_000; fired < 2 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
  const during = fired;
  clearInterval(interval);
  wake.stop();
  assert.ok(during >= 2, `fired ${during} times during continuous notifications`);
});

test("sqlite: a journal from before listing by page gets its state column and listing indexes once, and lists its sessions", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-journal-"));
  try {
    const file = join(dir, "journal.sqlite");
    let store = new SqliteStore(file);
    const created = (id: string, at: number, owner?: string) => ({ sessionId: id, sequence: 1, at, type: "session.created", data: { model: { provider: "scripted", script: [] }, tools: [], ...(owner ? { owner } : {}) } }) as JournalRecord;
    await Promise.all([store.append(created("ses_old", 1000, "k1")), store.append(created("ses_new", 2000))]);
    await store.close();
    // The directory as the previous version left it: no state column, no listing index.
    const db = new Database(file);
    db.exec("DROP INDEX sessions_listing; DROP INDEX sessions_owner_listing; ALTER TABLE sessions DROP COLUMN state;");
    db.close();
    store = new SqliteStore(file);
    try {
      const indexes = (store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sessions' AND name LIKE 'sessions_%listing'").all() as Array<{ name: string }>).map((r) => r.name).sort();
      assert.equal(indexes, ["sessions_listing", "sessions_owner_listing"]);
      assert.equal((await store.listSessions({ limit: 10 })).sessions.map((s) => s.head.sessionId), ["ses_new", "ses_old"]);
      assert.equal((await store.listSessions({ limit: 10, owner: "k1" })).sessions.map((s) => [s.head.sessionId, s.created.owner]), [["ses_old", "k1"]]);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
