// The journal store contract, run against every store: SQLite (the default), memory, and PostgreSQL
// on a real server these tests start (initdb + pg_ctl in a temporary folder). Runtime nodes on the
// PostgreSQL store (leases, fencing, routing, failover) are tested in cluster.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { SqliteStore, listingSql as sqliteListingSql } from "../src/journal/sqlite.ts";
import { MemoryStore } from "../src/journal/memory.ts";
import { PostgresStore, listingSql as postgresListingSql } from "../src/journal/postgres.ts";
import { NodeJournal } from "../src/cluster/node-journal.ts";
import { NodeFence } from "../src/cluster/fence.ts";
import type { SessionHead } from "../src/journal/head.ts";
import type { HostRow, KeyRow, KeyedMessage, ListQuery, SessionPage, StoreStats } from "../src/journal/store.ts";
import fc from "fast-check";
import { freshDatabase, queryRows } from "./helpers/nodes.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import { refusedServe } from "./helpers/cli.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";

/** What the contract needs of a store, reads awaited (the SQLite and memory stores answer at once). */
interface Store {
  readonly stats: StoreStats;
  append(r: JournalRecord, onCommit?: (r: JournalRecord) => void): Promise<unknown>;
  read(id: string, after?: number, through?: number): JournalRecord[] | Promise<JournalRecord[]>;
  head(id: string): SessionHead | undefined | Promise<SessionHead | undefined>;
  findMessage(id: string, key: string): Promise<KeyedMessage | undefined>;
  openWork(): string[] | Promise<string[]>;
  sessionIds(): string[] | Promise<string[]>;
  listSessions(query: ListQuery): Promise<SessionPage>;
  saveHost(row: HostRow): void | Promise<void>;
  deleteHost(hostId: string): void | Promise<void>;
  loadHosts(): HostRow[] | Promise<HostRow[]>;
  saveKey(row: KeyRow): void | Promise<void>;
  loadKeys(): KeyRow[] | Promise<KeyRow[]>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

interface Kind {
  name: string;
  durable: boolean;
  /** A fresh, empty place for a journal; `open` opens a store on it (again, for the durable ones). */
  place(): Promise<{ open(): Promise<Store>; drop(): Promise<void> }>;
}

let cluster: PgCluster;
let databases = 0;

const KINDS: Kind[] = [
  {
    name: "sqlite",
    durable: true,
    async place() {
      const dir = mkdtempSync(join(tmpdir(), "brain-contract-"));
      return { open: async () => new SqliteStore(join(dir, "journal.sqlite")), drop: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "memory",
    durable: false,
    async place() {
      return { open: async () => new MemoryStore(), drop: async () => {} };
    },
  },
  {
    name: "postgres",
    durable: true,
    async place() {
      const url = await freshDatabase(cluster.url, `contract_${++databases}`);
      return { open: () => PostgresStore.open(url), drop: async () => {} };
    },
  },
];

const rec = (sessionId: string, sequence: number, type: JournalRecord["type"] = "tool.returned", data: unknown = { callId: `${sessionId}:1` }): JournalRecord =>
  ({ sessionId, sequence, at: 1_764_680_000_000 + sequence, type, data }) as JournalRecord;
const created = (sessionId: string, owner?: string) => rec(sessionId, 1, "session.created", { model: { provider: "scripted", script: [] }, tools: [], ...(owner ? { owner } : {}) });
/** session.created at a given time (a listing orders by it), with a system prompt naming the session so its data can be checked. */
const createdAt = (sessionId: string, at: number, owner?: string) =>
  ({ sessionId, sequence: 1, at, type: "session.created", data: { model: { provider: "scripted", script: [] }, tools: [], system: `I am ${sessionId}`, ...(owner ? { owner } : {}) } }) as JournalRecord;
const T0 = 1_764_680_000_000;

/** Every page of a listing, `limit` at a time: the ids of each page, and whether each page but the last had a `next`. */
async function pages(store: Store, query: Omit<ListQuery, "after">): Promise<string[][]> {
  const out: string[][] = [];
  let after: ListQuery["after"];
  for (;;) {
    const page = await store.listSessions({ ...query, ...(after ? { after } : {}) });
    out.push(page.sessions.map((s) => s.head.sessionId));
    for (const s of page.sessions) assert.is(s.created.system, `I am ${s.head.sessionId}`, "a listed session comes with its own session.created data");
    if (page.next === undefined) return out;
    assert.equal(page.next, { createdAt: page.sessions.at(-1)!.head.createdAt, sessionId: page.sessions.at(-1)!.head.sessionId }, "next is the page's last position");
    after = page.next;
  }
}

/** A turn opened (running) in a session whose last record is `sequence`. */
const openTurn = (store: Store, id: string, sequence: number) =>
  Promise.all([store.append(rec(id, sequence + 1, "message.user", { text: "hi", activation: 1 })), store.append(rec(id, sequence + 2, "turn.started", { activation: 1, cause: "message" }))]);

test.before(async () => {
  cluster = await startPgCluster();
});

test.after(async () => {
  await cluster?.stop();
});

for (const kind of KINDS) {
  const withStore = async (body: (store: Store, reopen: () => Promise<Store>) => Promise<void>) => {
    const place = await kind.place();
    let store = await place.open();
    try {
      await body(store, async () => {
        await store.close();
        store = await place.open();
        return store;
      });
    } finally {
      await store.close().catch(() => {});
      await place.drop();
    }
  };

  test(`${kind.name}: appends of one tick are one transaction, acknowledged only after it committed`, async () => {
    await withStore(async (store) => {
      let acked = 0;
      const all = [store.append(created("ses_a")), ...Array.from({ length: 9 }, (_, i) => store.append(rec("ses_a", i + 2)))].map((p) => p.then(() => acked++));
      assert.is(acked, 0, "nothing acknowledged in the appending tick");
      await Promise.all(all);
      assert.is(store.stats.transactions, 1);
      assert.is(store.stats.records, 10);
      const back = await store.read("ses_a");
      assert.equal(back.map((r) => r.sequence), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.ok(back.every((r) => validate.JournalRecord.Check(r)));
    });
  });

  test(`${kind.name}: an append's hook sees its record at the commit, before the append resolves with it; a hook that throws rejects that append only`, async () => {
    await withStore(async (store) => {
      const seen: string[] = [];
      const first = created("ses_k");
      const second = rec("ses_k", 2);
      const third = rec("ses_k", 3);
      const appended = [
        store.append(first, (r) => void seen.push(`hook ${r.sequence}`)).then((r) => (seen.push("resolved 1"), r)),
        store.append(second, () => {
          seen.push("hook 2");
          throw new Error("a listener failed");
        }),
        store.append(third, (r) => void seen.push(`hook ${r.sequence}`)),
      ];
      assert.equal(seen, [], "no hook in the appending tick");
      const [one, two, three] = await Promise.allSettled(appended);
      assert.is((one as PromiseFulfilledResult<unknown>).value, first, "resolves with the record appended");
      assert.is(((two as PromiseRejectedResult).reason as Error).message, "a listener failed");
      assert.is((three as PromiseFulfilledResult<unknown>).value, third);
      assert.equal(seen, ["hook 1", "hook 2", "hook 3", "resolved 1"], "every hook of the commit ran before any reaction to it");
      assert.equal((await store.read("ses_k")).map((r) => r.sequence), [1, 2, 3], "the commit itself stands");
    });
  });

  test(`${kind.name}: a session whose records do not follow its last one by one is refused unavailable; the batch's other sessions are written`, async () => {
    await withStore(async (store) => {
      await Promise.all([store.append(created("ses_h")), store.append(created("ses_i")), store.append(created("ses_j"))]);
      // ses_h skips 2 (a gap), ses_j repeats 1 (already written); ses_i follows its last record.
      const batch = await Promise.allSettled([store.append(rec("ses_i", 2)), store.append(rec("ses_h", 3)), store.append(rec("ses_h", 2)), store.append(rec("ses_j", 1))]);
      assert.equal(batch.map((r) => r.status), ["fulfilled", "rejected", "rejected", "rejected"]);
      for (const r of batch.slice(1)) {
        const e = (r as PromiseRejectedResult).reason as { code?: string; retryable?: boolean };
        assert.is(e.code, "unavailable");
        assert.is(e.retryable, true);
      }
      await store.append(rec("ses_h", 2));
      assert.equal((await store.read("ses_h")).map((r) => r.sequence), [1, 2]);
      assert.equal((await store.read("ses_i")).map((r) => r.sequence), [1, 2]);
      assert.equal((await store.read("ses_j")).map((r) => r.sequence), [1]);
      assert.is((await store.head("ses_j"))!.lastSequence, 1, "the refused records left no trace in the heads either");
    });
  });

  test(`${kind.name}: reading one session visits its own rows, in order, by range`, async () => {
    await withStore(async (store) => {
      const ids = Array.from({ length: 20 }, (_, i) => `ses_${String(i).padStart(3, "0")}`);
      for (let q = 1; q <= 100; q++) await Promise.all(ids.map((id) => store.append(q === 1 ? created(id) : rec(id, q))));
      const before = store.stats.rowsRead;
      assert.equal((await store.read(ids[5]!)).map((r) => r.sequence), Array.from({ length: 100 }, (_, i) => i + 1));
      assert.is(store.stats.rowsRead - before, 100, "its 100 rows, not the 2,000 of the journal");
      const mid = store.stats.rowsRead;
      assert.equal((await store.read(ids[7]!, 40, 43)).map((r) => r.sequence), [41, 42, 43]);
      assert.ok(store.stats.rowsRead - mid <= 3 + 63);
      assert.equal(await store.read("ses_none"), []);
      assert.equal(await store.read(ids[0]!, 100), []);
    });
  });

  test(`${kind.name}: heads follow commits and name the sessions with open work; the session list is newest first`, async () => {
    await withStore(async (store, reopen) => {
      const one = (id: string, sequence: number, type: JournalRecord["type"], data: unknown) => store.append(rec(id, sequence, type, data));
      await store.append(created("ses_busy", "key1"));
      await store.append(created("ses_idle"));
      await store.append(created("ses_gone"));
      await Promise.all([
        one("ses_busy", 2, "message.user", { text: "hi", activation: 1 }),
        one("ses_busy", 3, "turn.started", { activation: 1, cause: "message" }),
        one("ses_busy", 4, "model.request", { conversation: { through: 3 } }),
        one("ses_busy", 5, "model.response", { request: 4, result: { text: "", toolCalls: [], stopReason: "end", usage: { inputTokens: 0, outputTokens: 0 } } }),
        one("ses_busy", 6, "tool.call_started", { callId: "ses_busy:6", tool: "t", modelCallId: "c", input: null, placement: { kind: "host", hostId: "h" }, activation: 1, deadlineAt: null }),
        one("ses_idle", 2, "message.user", { text: "hi", activation: 1 }),
        one("ses_gone", 2, "session.deleted", {}),
      ]);
      for (let round = 0; round < (kind.durable ? 2 : 1); round++) {
        const busy = (await store.head("ses_busy"))!;
        assert.equal(
          { last: busy.lastSequence, activations: busy.activations, models: busy.modelRequests, openModels: busy.openModelRequests, calls: busy.openCalls, turn: busy.turnOpen, owner: busy.owner },
          { last: 6, activations: 1, models: 1, openModels: 0, calls: 1, turn: true, owner: "key1" },
          `after ${round === 0 ? "the commits" : "reopening"}`,
        );
        assert.ok((await store.head("ses_gone"))!.deleted);
        assert.is(await store.head("ses_none"), undefined);
        assert.equal(await store.openWork(), ["ses_busy"]);
        assert.equal(new Set(await store.sessionIds()), new Set(["ses_busy", "ses_idle", "ses_gone"]));
        if (kind.durable && round === 0) store = await reopen();
      }
    });
  });

  test(`${kind.name}: a message is found by its idempotency key, in its own session only${kind.durable ? ", also after reopening" : ""}, whatever its text holds`, async () => {
    await withStore(async (store, reopen) => {
      const one = (id: string, sequence: number, type: JournalRecord["type"], data: unknown) => store.append(rec(id, sequence, type, data));
      await Promise.all([store.append(created("ses_k")), store.append(created("ses_l"))]);
      // What a parser of the whole record would trip on (\u0000, a lone surrogate), and text that looks like a key.
      const awkward = 'nul \u0000, lone \ud800, a quote " and "idempotencyKey":"k-2"';
      await Promise.all([
        one("ses_k", 2, "message.user", { text: awkward, activation: 1, idempotencyKey: "k-1" }),
        one("ses_k", 3, "turn.started", { activation: 1, cause: "message" }),
        one("ses_k", 4, "turn.completed", { activation: 1, text: "ok" }),
        one("ses_k", 5, "message.user", { text: "no key", activation: 2 }),
        one("ses_l", 2, "message.user", { text: "other", activation: 1, idempotencyKey: "k-2" }),
      ]);
      await one("ses_k", 6, "message.user", { text: "third", activation: 3, idempotencyKey: "~!#$%&'()*+,-./:;<=>?@[\\]^_`{|}" });
      for (let round = 0; round < (kind.durable ? 2 : 1); round++) {
        const before = store.stats.rowsRead;
        assert.equal(await store.findMessage("ses_k", "k-1"), { sequence: 2, activation: 1, text: awkward });
        assert.ok(store.stats.rowsRead - before <= 1, `one row read, not the session's (${store.stats.rowsRead - before})`);
        assert.equal(await store.findMessage("ses_k", "~!#$%&'()*+,-./:;<=>?@[\\]^_`{|}"), { sequence: 6, activation: 3, text: "third" });
        assert.is(await store.findMessage("ses_k", "k-2"), undefined, "another session's key");
        assert.equal(await store.findMessage("ses_l", "k-2"), { sequence: 2, activation: 1, text: "other" });
        assert.is(await store.findMessage("ses_k", "K-1"), undefined, "keys are case-sensitive");
        assert.is(await store.findMessage("ses_none", "k-1"), undefined);
        if (kind.durable && round === 0) store = await reopen();
      }
    });
  });

  test(`${kind.name}: hosts and keys are kept${kind.durable ? " across reopening" : ""}; a deleted host is gone${kind.durable ? " for good" : ""}`, async () => {
    await withStore(async (store, reopen) => {
      await store.saveHost({ hostId: "h1", salt: "s", hash: "x", contracts: [], registeredAt: 5, owner: "k1" });
      await store.saveHost({ hostId: "h1", salt: "s", hash: "x", contracts: [{ name: "t", description: "d", inputSchema: {}, digest: "0".repeat(64) }], registeredAt: 5, owner: "k1" });
      await store.saveHost({ hostId: "managed-0123", salt: "s2", hash: "y", contracts: [], registeredAt: 6 });
      await store.saveHost({ hostId: "managed-4567", salt: "s3", hash: "z", contracts: [], registeredAt: 6 });
      await store.saveKey({ keyId: "k1", name: "app", hash: "ab", createdAt: 7 });
      await store.saveKey({ keyId: "k1", name: "app", hash: "ab", createdAt: 7, revokedAt: 9 });
      await store.deleteHost("managed-0123");
      // Deleting an id the store does not hold is nothing.
      await store.deleteHost("never-registered");
      const ids = async () => (await store.loadHosts()).map((h) => h.hostId).sort();
      assert.equal(await ids(), ["h1", "managed-4567"]);
      if (kind.durable) store = await reopen();
      const hosts = (await store.loadHosts()).sort((a, b) => a.hostId.localeCompare(b.hostId));
      assert.equal(hosts.map((h) => [h.hostId, h.contracts.length, h.owner]), [["h1", 1, "k1"], ["managed-4567", 0, undefined]]);
      await store.deleteHost("managed-4567");
      if (kind.durable) store = await reopen();
      assert.equal(await ids(), ["h1"]);
      assert.equal((await store.loadKeys()).map((k) => [k.keyId, k.revokedAt]), [["k1", 9]]);
    });
  });

  test(`${kind.name}: listing pages newest first (ties by id), with next until the last page, a key's sessions only or every session`, async () => {
    await withStore(async (store, reopen) => {
      // Appended out of creation order, with ties in createdAt, owners k1, k2 and the operator.
      const made: Array<[string, number, string | undefined]> = [
        ["ses_c", T0 + 20, "k1"], ["ses_a", T0 + 10, undefined], ["ses_e", T0 + 30, "k2"], ["ses_b", T0 + 20, "k1"],
        ["ses_d", T0 + 20, undefined], ["ses_g", T0 + 50, "k1"], ["ses_f", T0 + 40, "k1"],
      ];
      for (const [id, at, owner] of made) await store.append(createdAt(id, at, owner));
      const newestFirst = ["ses_g", "ses_f", "ses_e", "ses_d", "ses_c", "ses_b", "ses_a"];
      for (let round = 0; round < (kind.durable ? 2 : 1); round++) {
        assert.equal(await pages(store, { limit: 3 }), [newestFirst.slice(0, 3), newestFirst.slice(3, 6), newestFirst.slice(6)], `every session (round ${round})`);
        assert.equal(await pages(store, { limit: 7 }), [newestFirst], "a page that holds the rest has no next");
        assert.equal(await pages(store, { limit: 2, owner: "k1" }), [["ses_g", "ses_f"], ["ses_c", "ses_b"]]);
        assert.equal(await pages(store, { limit: 50, owner: "k2" }), [["ses_e"]]);
        assert.equal(await pages(store, { limit: 50, owner: "k3" }), [[]], "a key with no sessions lists none");
        // A position between sessions is a place in the order, not a session.
        const between = await store.listSessions({ limit: 50, after: { createdAt: T0 + 20, sessionId: "ses_c0" } });
        assert.equal(between.sessions.map((s) => s.head.sessionId), ["ses_c", "ses_b", "ses_a"]);
        const head = (await store.listSessions({ limit: 1, owner: "k1" })).sessions[0]!.head;
        assert.equal([head.sessionId, head.createdAt, head.owner, head.lastSequence, head.deleted], ["ses_g", T0 + 50, "k1", 1, false]);
        if (kind.durable && round === 0) store = await reopen();
      }
    });
  });

  test(`${kind.name}: the status filter is served from heads (running: a turn open), with the owner filter too`, async () => {
    await withStore(async (store, reopen) => {
      for (const [i, id] of ["ses_idle", "ses_run", "ses_gone", "ses_done", "ses_k_run", "ses_k_gone"].entries()) await store.append(createdAt(id, T0 + i, id.startsWith("ses_k_") ? "k1" : undefined));
      await openTurn(store, "ses_run", 1);
      await openTurn(store, "ses_k_run", 1);
      await openTurn(store, "ses_done", 1);
      await store.append(rec("ses_done", 4, "turn.completed", { activation: 1, text: "ok" }));
      await Promise.all([store.append(rec("ses_gone", 2, "session.deleted", {})), store.append(rec("ses_k_gone", 2, "session.deleted", {}))]);
      for (let round = 0; round < (kind.durable ? 2 : 1); round++) {
        assert.equal(await pages(store, { limit: 1, status: "running" }), [["ses_k_run"], ["ses_run"]]);
        assert.equal(await pages(store, { limit: 10, status: "idle" }), [["ses_done", "ses_idle"]]);
        assert.equal(await pages(store, { limit: 10, status: "deleted" }), [["ses_k_gone", "ses_gone"]]);
        assert.equal(await pages(store, { limit: 10, status: "deleted", owner: "k1" }), [["ses_k_gone"]]);
        assert.equal(await pages(store, { limit: 10, status: "idle", owner: "k1" }), [[]]);
        const all = (await store.listSessions({ limit: 10 })).sessions.map((s) => [s.head.sessionId, s.head.turnOpen, s.head.deleted]);
        assert.equal(all, [["ses_k_gone", false, true], ["ses_k_run", true, false], ["ses_done", false, false], ["ses_gone", false, true], ["ses_run", true, false], ["ses_idle", false, false]]);
        if (kind.durable && round === 0) store = await reopen();
      }
    });
  });

  test(`${kind.name}: a session is listed the moment its creation is acknowledged, and a just-deleted one as deleted, before any directory write`, async () => {
    await withStore(async (store, reopen) => {
      for (let i = 1; i <= 5; i++) await store.append(createdAt(`ses_${i}`, T0 + i));
      // Reopening writes what is held (SQLite's directory): from here on only the changes below are in memory.
      if (kind.durable) store = await reopen();
      await store.append(createdAt("ses_new", T0 + 9));
      await Promise.all([store.append(rec("ses_5", 2, "session.deleted", {})), store.append(rec("ses_4", 2, "session.deleted", {}))]);
      await openTurn(store, "ses_2", 1);
      assert.equal((await store.listSessions({ limit: 2 })).sessions.map((s) => [s.head.sessionId, s.head.deleted]), [["ses_new", false], ["ses_5", true]]);
      // The directory's rows of ses_5 and ses_4 still say idle: they are skipped, and the page is read on past them.
      assert.equal(await pages(store, { limit: 1, status: "idle" }), [["ses_new"], ["ses_3"], ["ses_1"]]);
      assert.equal(await pages(store, { limit: 1, status: "deleted" }), [["ses_5"], ["ses_4"]]);
      assert.equal(await pages(store, { limit: 5, status: "running" }), [["ses_2"]]);
      assert.equal(await pages(store, { limit: 4 }), [["ses_new", "ses_5", "ses_4", "ses_3"], ["ses_2", "ses_1"]]);
    });
  });

  test(`${kind.name}: a page visits its own rows: the same with 30 sessions as with 600`, async () => {
    await withStore(async (store, reopen) => {
      const visits: Array<{ heads: number; rows: number }> = [];
      let n = 0;
      for (const total of [30, 600]) {
        const batch: Promise<unknown>[] = [];
        for (; n < total; n++) batch.push(store.append(createdAt(`ses_${String(n).padStart(4, "0")}`, T0 + n, n % 3 === 0 ? "k1" : undefined)));
        await Promise.all(batch);
        if (kind.durable) store = await reopen();
        for (const query of [{ limit: 5 }, { limit: 5, owner: "k1" }, { limit: 5, status: "idle" as const, owner: "k1" }]) {
          const before = { heads: store.stats.headsListed, rows: store.stats.rowsRead };
          const page = await store.listSessions(query);
          assert.is(page.sessions.length, 5);
          visits.push({ heads: store.stats.headsListed - before.heads, rows: store.stats.rowsRead - before.rows });
        }
      }
      assert.equal(visits.slice(3), visits.slice(0, 3), `rows visited by the same pages at 30 and 600 sessions: ${JSON.stringify(visits)}`);
      // At most a page and one more from each state's range, and one session.created row per listed session (and the one more).
      for (const v of visits) assert.ok(v.heads <= 3 * 6 && v.rows <= 6, JSON.stringify(v));
    });
  });

  if (kind.durable) {
    test(`${kind.name}: records read back after reopening are byte-identical`, async () => {
      await withStore(async (store, reopen) => {
        const data = { callId: "ses_b:1", text: "ünïcødé \u{1F600}", n: 1.5, big: 12345678901234, nested: { a: [1, { b: null }] } };
        // What a batch's texts (journal/postgres.ts JOURNAL_INSERT: JSON, an array literal, UTF-8 bytes
        // cut by offset) must escape or could misread: quotes, backslashes, braces, commas, NULL, an
        // empty string, control characters (\u0000 included: PostgreSQL refuses it in a parsed JSON
        // string), a lone surrogate, and multi-byte characters before and after them (byte offsets).
        const awkward = { callId: "ses_b:2", q: 'say "hi" \\ back\\slash \\"', braces: "{a,b},{}", word: "NULL", empty: "", ctl: "\u0001\u0000\t\n", sep: "a\u0001b", lone: "\ud800x\udc00", wide: "é\u{1F600}中" };
        await store.append(created("ses_b"));
        // One tick: both in one batch, so the second's text sits beside the first's in one literal.
        await Promise.all([store.append(rec("ses_b", 2, "tool.event", data)), store.append(rec("ses_b", 3, "tool.event", awkward))]);
        assert.equal((await store.read("ses_b", 2))[0]!.data, awkward);
        const before = JSON.stringify(await store.read("ses_b"));
        store = await reopen();
        assert.is(JSON.stringify(await store.read("ses_b")), before);
      });
    });
  }
}

test("idempotency keys are looked up through a partial index (SQLite: an expression index; PostgreSQL: a column), which a node's journal reads too", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-contract-"));
  const sqlite = new SqliteStore(join(dir, "journal.sqlite"));
  try {
    const plan = sqlite.db.prepare("EXPLAIN QUERY PLAN SELECT sequence, data FROM journal WHERE session_id = ? AND type = 'message.user' AND json_extract(data, '$.idempotencyKey') = ? LIMIT 1").all("s", "k") as Array<{ detail: string }>;
    assert.match(plan.map((p) => p.detail).join(" "), /USING INDEX journal_message_keys/);
    const sql = (sqlite.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'journal_message_keys'").get() as { sql: string }).sql;
    assert.match(sql, /WHERE type = 'message.user'/, "partial: only message rows have an entry");
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const store = await PostgresStore.open(url);
  const node = new NodeJournal(store, new NodeFence("contract"));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await store.append(created("ses_pk"));
    await Promise.all([store.append(rec("ses_pk", 2, "message.user", { text: "hi", activation: 1, idempotencyKey: "k-9" })), store.append(rec("ses_pk", 3, "turn.started", { activation: 1, cause: "message" }))]);
    const { rows } = await client.query<{ idempotency_key: string | null }>("SELECT idempotency_key FROM journal WHERE session_id = 'ses_pk' ORDER BY sequence");
    assert.equal(rows.map((r) => r.idempotency_key), [null, "k-9", null]);
    await client.query("SET enable_seqscan = off");
    const explain = await client.query<{ "QUERY PLAN": string }>("EXPLAIN SELECT sequence, data FROM journal WHERE session_id = 'ses_pk' AND idempotency_key = 'k-9' LIMIT 1");
    assert.match(explain.rows.map((r) => r["QUERY PLAN"]).join(" "), /journal_message_keys/);
    assert.equal(await node.findMessage("ses_pk", "k-9"), { sequence: 2, activation: 1, text: "hi" });
  } finally {
    await client.end();
    await node.close();
  }
});

test("sqlite: every listing statement is an index range in listing order (EXPLAIN QUERY PLAN): no scan of the sessions, no sort", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-contract-"));
  const store = new SqliteStore(join(dir, "journal.sqlite"));
  try {
    for (const byOwner of [false, true]) {
      for (const after of [false, true]) {
        const params = { state: 0, limit: 26, ...(byOwner ? { owner: "k1" } : {}), ...(after ? { createdAt: T0, sessionId: "ses_x" } : {}) };
        const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sqliteListingSql(byOwner, after)}`).all(params) as Array<{ detail: string }>).map((r) => r.detail);
        assert.equal(plan.length, 1, plan.join("; "));
        assert.match(plan[0]!, byOwner ? /^SEARCH sessions USING INDEX sessions_owner_listing \(owner=\? AND state=\?/ : /^SEARCH sessions USING INDEX sessions_listing \(state=\?/);
        if (after) assert.match(plan[0]!, /\(created_at,session_id\)<\(\?,\?\)\)$/, "the cursor is part of the index range");
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("postgres: every listing statement reads index ranges of session_listing in listing order, then the page's heads and session.created rows by key (EXPLAIN): no sequential scan, no sort", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const store = await PostgresStore.open(url);
  try {
    // Enough rows that a sequential scan would be the planner's choice if the index did not serve the order.
    await Promise.all(Array.from({ length: 3000 }, (_, i) => store.append(createdAt(`ses_${String(i).padStart(5, "0")}`, T0 + i, i % 4 === 0 ? "k1" : undefined))));
    await queryRows(url, "ANALYZE");
    type PlanNode = { "Node Type": string; "Index Name"?: string; "Relation Name"?: string; Plans?: PlanNode[] };
    const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    for (const byOwner of [false, true]) {
      for (const after of [false, true]) {
        for (const statuses of [["idle", "running", "deleted"], ["running"]] as const) {
          const values: unknown[] = [26, ...(byOwner ? ["k1"] : []), ...(after ? [T0 + 2000, "ses_02000"] : [])];
          const [row] = await queryRows(url, `EXPLAIN (FORMAT JSON) ${postgresListingSql(byOwner, after, [...statuses])}`, values);
          const all = nodes((row["QUERY PLAN"] as Array<{ Plan: PlanNode }>)[0]!.Plan);
          const what = JSON.stringify(all.map((n) => [n["Node Type"], n["Index Name"] ?? n["Relation Name"]]));
          assert.not.ok(all.some((n) => n["Node Type"] === "Seq Scan" || n["Node Type"] === "Sort"), what);
          // An index-only scan (the visibility map says so) or an index scan: either reads the range alone.
          const listing = all.filter((n) => n["Relation Name"] === "session_listing").map((n) => `${n["Node Type"].replace("Index Only Scan", "Index Scan")} ${n["Index Name"]}`);
          assert.equal(listing, statuses.map(() => `Index Scan ${byOwner ? "session_listing_owner" : "session_listing_all"}`), what);
          assert.ok(all.some((n) => n["Relation Name"] === "sessions" && n["Index Name"] === "sessions_pkey"), what);
          assert.ok(all.some((n) => n["Relation Name"] === "journal" && n["Index Name"] === "journal_pkey"), what);
        }
      }
    }
  } finally {
    await store.close();
  }
});

test("postgres: a batch's records (one JSON text, journal/postgres.ts) read back byte-identical, whatever their data", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const store = await PostgresStore.open(url);
  try {
    // Any JSON value, its strings from every code point (lone surrogates, NUL and other controls included).
    const value = fc.jsonValue({ maxDepth: 3, stringUnit: "binary" });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 6 }), async (values) => {
        const id = `ses_prop_${++n}`;
        await store.append(created(id));
        // One tick: every record in one batch, so their texts sit side by side in one JSON text.
        await Promise.all(values.map((v, i) => store.append(rec(id, i + 2, "tool.event", { callId: `${id}:1`, v }))));
        const back = await store.read(id, 1);
        assert.equal(back.map((r) => JSON.stringify(r.data)), values.map((v) => JSON.stringify({ callId: `${id}:1`, v })));
      }),
      { numRuns: 150 },
    );
  } finally {
    await store.close();
  }
});

test("postgres: two writers commit a large tick's sessions side by side, each session's records in order and in one batch in flight", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  // minSessionsPerSplit 2: a tick of 4 or more sessions is dealt out between the two writers.
  let store = await PostgresStore.open(url, { writers: 2, minSessionsPerSplit: 2 });
  try {
    const ids = Array.from({ length: 6 }, (_, i) => `ses_w${i}`);
    await Promise.all(ids.map((id) => store.append(created(id))));
    assert.is(store.stats.transactions, 2, "one tick of 6 sessions: two transactions, one per writer");
    // Ticks that overlap batches in flight: a session appended again while its batch commits waits
    // for it (no gap, no reordering, whatever commits first).
    const next = new Map(ids.map((id) => [id, 2]));
    const acks: Promise<unknown>[] = [];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let tick = 0; tick < 40; tick++) {
      for (const id of ids) {
        if (random() < 0.6) {
          const n = next.get(id)!;
          next.set(id, n + 1);
          // message.user: each one counts in the head (activations), so a head computed by two
          // batches of one session in flight at once would lose one.
          acks.push(store.append(rec(id, n, "message.user", { text: `tick ${tick}` })));
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(acks);
    const check = async () => {
      for (const id of ids) {
        const last = next.get(id)! - 1;
        assert.equal((await store.read(id)).map((r) => r.sequence), Array.from({ length: last }, (_, i) => i + 1), `${id}: gap-free, in order`);
        const head = await store.head(id);
        assert.equal([head?.lastSequence, head?.activations], [last, last - 1], `${id}: its head counts every record`);
      }
    };
    await check();
    await store.close();
    store = await PostgresStore.open(url, { writers: 2, minSessionsPerSplit: 2 });
    await check();
  } finally {
    await store.close();
  }
});

test("postgres: a running session's row in sessions lags its records (heads written when due); another store's head, listing and open work fold the records after it; a settled session's row is exact", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
  const row = async (id: string) => (await queryRows(url, "SELECT last_sequence, open_calls, turn_open FROM sessions WHERE session_id = $1", [id]))[0];
  try {
    const id = "ses_lag";
    await a.append(created(id));
    await openTurn(a, id, 1);
    assert.equal(await row(id), { last_sequence: 3, open_calls: 0, turn_open: true }, "a turn opening writes the row (its status changed)");
    // Calls inside the turn, one commit each: the session has open work all along, so its row is not due.
    let seq = 3;
    for (let i = 0; i < 5; i++) {
      await a.append(rec(id, ++seq, "tool.call_started", { callId: `c${i}` }));
      await a.append(rec(id, ++seq, "tool.finished", { callId: `c${i}` }));
    }
    await a.append(rec(id, ++seq, "tool.call_started", { callId: "c5" }));
    assert.equal(await row(id), { last_sequence: 3, open_calls: 0, turn_open: true }, "the row lags while the turn runs");
    const expected = { ...(await a.head(id))! };
    assert.equal([expected.lastSequence, expected.openCalls, expected.turnOpen], [14, 1, true]);
    assert.equal(await b.head(id), expected, "another store folds the records after the row: the same head");
    assert.equal(await b.openWork(), [id]);
    const listed = (await b.listSessions({ limit: 10 })).sessions.find((x) => x.head.sessionId === id);
    assert.is(listed?.head.lastSequence, 14, "a listing shows the journal's last sequence");
    // The turn ends: the session has no open work, so its row is due, and exact.
    await a.append(rec(id, ++seq, "tool.finished", { callId: "c5" }));
    await a.append(rec(id, ++seq, "turn.completed", { activation: 1 }));
    assert.equal(await row(id), { last_sequence: 16, open_calls: 0, turn_open: false }, "a settled session's row is exact");
    assert.equal(await b.head(id), await a.head(id));
    assert.equal(await b.openWork(), []);
  } finally {
    await a.close();
    await b.close();
  }
});

test("postgres: a call outside a turn writes its session's row when it opens, not when it ends; the row says open work until the settle (settleMs after the last commit), another store's openWork folds meanwhile; close settles", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const [a, b] = await Promise.all([PostgresStore.open(url, { settleMs: 300 }), PostgresStore.open(url)]);
  const row = async (id: string) => (await queryRows(url, "SELECT last_sequence, open_calls, turn_open FROM sessions WHERE session_id = $1", [id]))[0];
  try {
    const id = "ses_calls";
    await a.append(created(id));
    assert.equal(await row(id), { last_sequence: 1, open_calls: 0, turn_open: false });
    await a.append(rec(id, 2, "tool.call_started", { callId: "c0" }));
    assert.equal(await row(id), { last_sequence: 2, open_calls: 1, turn_open: false }, "open work appearing writes the row");
    let seq = 2;
    for (let i = 0; i < 5; i++) {
      await a.append(rec(id, ++seq, "tool.finished", { callId: `c${i}` }));
      await a.append(rec(id, ++seq, "tool.call_started", { callId: `c${i + 1}` }));
    }
    await a.append(rec(id, ++seq, "tool.finished", { callId: "c5" }));
    assert.equal(await row(id), { last_sequence: 2, open_calls: 1, turn_open: false }, "calls ending and starting outside a turn leave the row as it was");
    assert.equal((await b.head(id))?.openCalls, 0, "another store folds the records after the row");
    assert.equal(await b.openWork(), [], "openWork folds a row that says open work: none is left");
    const listed = (await b.listSessions({ limit: 10, status: "idle" })).sessions.find((x) => x.head.sessionId === id);
    assert.is(listed?.head.lastSequence, 13, "listed idle, with the journal's last sequence");
    const until = Date.now() + 5000;
    while ((await row(id))?.open_calls !== 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await row(id), { last_sequence: 13, open_calls: 0, turn_open: false }, "the settle makes the row exact");
    // Work opening again is written at once; ending it and closing the store settles the row.
    await a.append(rec(id, 14, "tool.call_started", { callId: "c6" }));
    assert.equal(await row(id), { last_sequence: 14, open_calls: 1, turn_open: false });
    await a.append(rec(id, 15, "tool.finished", { callId: "c6" }));
    await a.close();
    assert.equal(await row(id), { last_sequence: 15, open_calls: 0, turn_open: false }, "a clean close leaves the row exact");
  } finally {
    await a.close().catch(() => {});
    await b.close();
  }
});

test("postgres: a row left saying open work (its store stopped before the settle) is found by openWork folded, and settled by the next store that runs recovery", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const row = async (id: string) => (await queryRows(url, "SELECT last_sequence, open_calls FROM sessions WHERE session_id = $1", [id]))[0];
  const a = await PostgresStore.open(url);
  await a.append(created("ses_left"));
  await a.append(created("ses_open"));
  await Promise.all([a.append(rec("ses_left", 2, "tool.call_started", { callId: "c" })), a.append(rec("ses_open", 2, "tool.call_started", { callId: "d" }))]);
  await a.append(rec("ses_left", 3, "tool.finished", { callId: "c" }));
  await a.flush();
  // As a crash would leave it: the process gone before its settle (close would have settled).
  const gone = a as unknown as { writers: Array<{ client: pg.Client }>; readers: pg.Pool; settleTimer: NodeJS.Timeout | undefined; closed: boolean };
  gone.closed = true;
  clearTimeout(gone.settleTimer);
  for (const w of gone.writers) await w.client.end();
  await gone.readers.end();
  assert.equal(await row("ses_left"), { last_sequence: 2, open_calls: 1 });
  const b = await PostgresStore.open(url, { settleMs: 50 });
  try {
    assert.equal(await b.openWork(), ["ses_open"], "only the session with open work, folded");
    const until = Date.now() + 5000;
    while ((await row("ses_left"))?.open_calls !== 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await row("ses_left"), { last_sequence: 3, open_calls: 0 }, "settled by the store that found it");
    assert.equal(await row("ses_open"), { last_sequence: 2, open_calls: 1 });
  } finally {
    await b.close();
  }
});

test("postgres: a node's settle is fenced: once another node took the session's lease it writes nothing", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const fence = new NodeFence("settle-node");
  const store = await PostgresStore.open(url, { fence, settleMs: 200 });
  const row = async (id: string) => (await queryRows(url, "SELECT last_sequence, open_calls FROM sessions WHERE session_id = $1", [id]))[0];
  try {
    await queryRows(url, "INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('settle-node', 'http://x', now() + interval '1 hour', 'run-1')");
    fence.joined("run-1");
    for (const id of ["ses_kept", "ses_taken"]) {
      fence.hold(id, 1);
      await store.append(created(id));
      await store.append(rec(id, 2, "tool.call_started", { callId: "c" }));
      await store.append(rec(id, 3, "tool.finished", { callId: "c" }));
    }
    // Another node takes ses_taken over before the settle (its token raised, as Leases.acquire does).
    await queryRows(url, "UPDATE leases SET owner = 'other-node', token = token + 1 WHERE session_id = 'ses_taken'");
    const until = Date.now() + 5000;
    while ((await row("ses_kept"))?.open_calls !== 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await row("ses_kept"), { last_sequence: 3, open_calls: 0 }, "the lease held: settled");
    assert.equal(await row("ses_taken"), { last_sequence: 2, open_calls: 1 }, "the lease taken: the row is left to its new owner");
    // The new owner reads the head (a takeover does, to see whether anything is left to recover): nothing
    // open, and it settles the row its predecessor left.
    const otherFence = new NodeFence("other-node");
    const other = await PostgresStore.open(url, { fence: otherFence, settleMs: 50 });
    try {
      await queryRows(url, "INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('other-node', 'http://y', now() + interval '1 hour', 'run-2')");
      otherFence.joined("run-2");
      otherFence.hold("ses_taken", 2);
      assert.is((await other.head("ses_taken"))?.openCalls, 0);
      const by = Date.now() + 5000;
      while ((await row("ses_taken"))?.open_calls !== 0 && Date.now() < by) await new Promise((r) => setTimeout(r, 25));
      assert.equal(await row("ses_taken"), { last_sequence: 3, open_calls: 0 }, "settled by the node that holds it now");
    } finally {
      await other.close();
    }
  } finally {
    await store.close();
  }
});

test("postgres: a database of schema version 8 (rows written with every batch) migrates to 9 with its sessions readable; a runtime older than the database refuses it", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  let store = await PostgresStore.open(url);
  await store.append(created("ses_v8"));
  await openTurn(store, "ses_v8", 1);
  await store.close();
  // As a runtime of version 8 left it: no comment on sessions, schema_version 8.
  await queryRows(url, "COMMENT ON TABLE sessions IS NULL");
  await queryRows(url, "UPDATE brain_meta SET value = '8' WHERE key = 'schema_version'");
  store = await PostgresStore.open(url);
  try {
    assert.equal(await queryRows(url, "SELECT value FROM brain_meta WHERE key = 'schema_version'"), [{ value: "9" }]);
    const [{ comment }] = await queryRows(url, "SELECT obj_description('sessions'::regclass, 'pg_class') AS comment");
    assert.match(comment, /fold the journal records after last_sequence/);
    assert.equal([(await store.head("ses_v8"))?.lastSequence, (await store.head("ses_v8"))?.turnOpen], [3, true]);
    await store.append(rec("ses_v8", 4, "tool.call_started", { callId: "c" }));
    assert.is((await store.head("ses_v8"))?.openCalls, 1);
  } finally {
    await store.close();
  }
  await queryRows(url, "UPDATE brain_meta SET value = '10' WHERE key = 'schema_version'");
  const refused = await PostgresStore.open(url).then(
    async (s) => (await s.close(), undefined),
    (e: unknown) => e as Error,
  );
  assert.match(String(refused?.message), /version 10, newer than this runtime's 9/);
});

test("postgres: two stores on one database (two nodes) append to different sessions, and each reads the other's", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
  try {
    await Promise.all([a.append(created("ses_on_a")), b.append(created("ses_on_b"))]);
    await Promise.all([a.append(rec("ses_on_a", 2)), b.append(rec("ses_on_b", 2))]);
    assert.equal((await a.read("ses_on_b")).map((r) => r.sequence), [1, 2]);
    assert.equal((await b.read("ses_on_a")).map((r) => r.sequence), [1, 2]);
    assert.equal(new Set(await a.sessionIds()), new Set(["ses_on_a", "ses_on_b"]));
    // Without leases (not built yet) nothing stops a second writer of one session but the key:
    // the duplicate sequence fails its batch whole.
    const dup = await Promise.allSettled([b.append(rec("ses_on_a", 2))]);
    assert.is(dup[0]!.status, "rejected");
  } finally {
    await a.close();
    await b.close();
  }
});

test("postgres: a node's journal (NodeJournal) forgets a deleted host at once, deletes its row after a registration in flight, and a refresh does not bring it back", async () => {
  const url = await freshDatabase(cluster.url, `contract_${++databases}`);
  const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
  const node = new NodeJournal(a, new NodeFence("contract-a"));
  const other = new NodeJournal(b, new NodeFence("contract-b"));
  try {
    node.saveHost({ hostId: "app-host", salt: "s", hash: "x", contracts: [], registeredAt: 1 });
    // Saved and deleted in one tick: the DELETE goes after the INSERT, never before it.
    node.saveHost({ hostId: "managed-1", salt: "s", hash: "x", contracts: [], registeredAt: 1 });
    node.deleteHost("managed-1");
    assert.equal((await node.loadHosts()).map((h) => h.hostId), ["app-host"]);
    await node.flush();
    assert.equal((await a.loadHosts()).map((h) => h.hostId), ["app-host"]);
    await other.loadCredentials();
    assert.equal((await other.loadHosts()).map((h) => h.hostId), ["app-host"]);
    // Another node's cache drops it at its next refresh.
    node.saveHost({ hostId: "managed-2", salt: "s", hash: "x", contracts: [], registeredAt: 2 });
    await node.flush();
    await other.loadCredentials();
    assert.equal((await other.loadHosts()).map((h) => h.hostId).sort(), ["app-host", "managed-2"]);
    node.deleteHost("managed-2");
    await node.loadCredentials();
    assert.equal((await node.loadHosts()).map((h) => h.hostId), ["app-host"]);
    await node.flush();
    await other.loadCredentials();
    assert.equal((await other.loadHosts()).map((h) => h.hostId), ["app-host"]);
  } finally {
    await node.close();
    await other.close();
  }
});

test("brain serve on BRAIN_JOURNAL=postgres://… refuses a bad lease time or node id with a clear error", async () => {
  for (const [env, message] of [
    [{ BRAIN_LEASE_MS: "50" }, /BRAIN_LEASE_MS must be an integer of at least 300/],
    [{ BRAIN_NODE_ID: "no spaces please" }, /BRAIN_NODE_ID must be 1-64 letters/],
    [{ BRAIN_NODE_URL: "ftp://x" }, /BRAIN_NODE_URL must be absolute http\(s\) URLs/],
  ] as const) {
    const { code, out } = await refusedServe({ BRAIN_JOURNAL: cluster.url, ...env });
    assert.is(code, 1, out);
    assert.match(out, message);
  }
  const { code, out } = await refusedServe({ BRAIN_JOURNAL: "mysql://x" });
  assert.is(code, 1);
  assert.match(out, /BRAIN_JOURNAL must be sqlite, memory or a postgres:\/\/ URL/);
});

test.run();
