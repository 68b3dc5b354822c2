import pg from "pg";
import type { JournalRecord, KeyLimits, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError, LeaseLostError } from "../errors.ts";
import { storeError } from "./pg-errors.ts";
import { outOfStep } from "./out-of-step.ts";
import { deepFreeze } from "./freeze.ts";
import { advanceHead, copyHead, hasOpenWork, headStatus, newHead } from "./head.ts";
import type { HeadStatus, SessionHead } from "./head.ts";
import { pageOf, settleCommitted } from "./store.ts";
import { PgSharedFiles, SHARED_FILES_MIGRATION } from "./shared-files.ts";
import { Int4Column, Int8Column, textArrayBytes } from "./pg-binary-arrays.ts";
import { BatchQuery, BindMessage } from "./pg-batch-query.ts";
import type { CommitHook, CommitObserver, HostRow, KeyRow, KeyedMessage, ListQuery, PendingRecord, SessionPage, StoreStats } from "./store.ts";

/** Schema versions, applied in order inside one transaction each, recorded in brain_meta. */
const MIGRATIONS: string[] = [
  `CREATE TABLE journal (
     session_id TEXT NOT NULL,
     sequence INTEGER NOT NULL,
     at BIGINT NOT NULL,
     type TEXT NOT NULL,
     data TEXT NOT NULL,
     PRIMARY KEY (session_id, sequence)
   );
   CREATE TABLE sessions (
     session_id TEXT PRIMARY KEY,
     created_at BIGINT NOT NULL,
     last_sequence INTEGER NOT NULL,
     activations INTEGER NOT NULL,
     model_requests INTEGER NOT NULL,
     open_calls INTEGER NOT NULL,
     open_model_requests INTEGER NOT NULL,
     turn_open BOOLEAN NOT NULL,
     deleted BOOLEAN NOT NULL,
     owner TEXT
   );
   CREATE INDEX sessions_open_work ON sessions (session_id) WHERE NOT deleted AND (open_calls > 0 OR open_model_requests > 0 OR turn_open);
   CREATE TABLE hosts (
     host_id TEXT PRIMARY KEY,
     salt TEXT NOT NULL,
     hash TEXT NOT NULL,
     contracts TEXT NOT NULL,
     registered_at BIGINT NOT NULL,
     owner TEXT
   );
   CREATE TABLE keys (
     key_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     hash TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     revoked_at BIGINT
   );`,
  // Several nodes (issue 20): each node's liveness, and one lease per session. A lease belongs to
  // its owner node while that node's row has not expired (one renewal keeps all of a node's leases);
  // `token` is the fencing token, raised by every change of hands.
  `CREATE TABLE nodes (
     node_id TEXT PRIMARY KEY,
     url TEXT NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL
   );
   CREATE TABLE leases (
     session_id TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     token BIGINT NOT NULL
   );
   CREATE INDEX leases_owner ON leases (owner);`,
  // Which node each host is connected to, so a session's owner reaches it through that node.
  `CREATE TABLE host_links (
     host_id TEXT PRIMARY KEY,
     node_id TEXT NOT NULL,
     url TEXT NOT NULL
   );`,
  // The fence moves from each session's lease row to the node's own row (one lock a batch, not one
  // per session): `run` names the process that joined as the node, so a second process with the
  // same node id (a restart) fences off the first one's writes.
  `ALTER TABLE nodes ADD COLUMN run TEXT NOT NULL DEFAULT '';`,
  // Idempotency keys of messages (issue 26): message.user's `idempotencyKey` in a column of its own,
  // written with the record (y in JOURNAL_INSERT), and a partial index over the rows that have one, so
  // commits of other records write no page of it. Not an expression over `data`: `data` is TEXT
  // (kept byte-identical), and reading it as json or jsonb de-escapes every string of the document,
  // which refuses \u0000 and lone surrogates in a message's text: such a message would fail its batch.
  `ALTER TABLE journal ADD COLUMN idempotency_key TEXT;
   CREATE INDEX journal_message_keys ON journal (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;`,
  // Listing by page (issue 27): every session's place in the listing order (newest first, ties by
  // id in code unit order whatever the database's collation), by state, every session's and each
  // owner's. A table of its own, kept by triggers on `sessions`: a commit updates a session's head
  // (every record), but its listing row only when it is created or its state changes (a turn opens
  // or ends, it is deleted). Indexes on `sessions` itself would take two more index entries in every
  // head update (a commit of 64 sessions' records ran ~20 % slower); the triggers' WHEN conditions
  // cost nothing in the updates they skip. Whatever writes heads (an older node during an upgrade
  // included) keeps the listing exact, in the same transaction.
  `CREATE TABLE session_listing (
     session_id TEXT PRIMARY KEY,
     owner TEXT,
     created_at BIGINT NOT NULL,
     state SMALLINT NOT NULL
   );
   CREATE FUNCTION brain_session_listed() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO session_listing (session_id, owner, created_at, state)
     VALUES (NEW.session_id, NEW.owner, NEW.created_at, CASE WHEN NEW.deleted THEN 2 WHEN NEW.turn_open THEN 1 ELSE 0 END)
     ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, created_at = EXCLUDED.created_at, state = EXCLUDED.state;
     RETURN NULL;
   END $$;
   CREATE FUNCTION brain_session_restated() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE session_listing SET owner = NEW.owner, created_at = NEW.created_at, state = CASE WHEN NEW.deleted THEN 2 WHEN NEW.turn_open THEN 1 ELSE 0 END
      WHERE session_id = NEW.session_id;
     RETURN NULL;
   END $$;
   CREATE TRIGGER sessions_listed AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION brain_session_listed();
   CREATE TRIGGER sessions_restated AFTER UPDATE ON sessions FOR EACH ROW
     WHEN (OLD.turn_open IS DISTINCT FROM NEW.turn_open OR OLD.deleted IS DISTINCT FROM NEW.deleted OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.owner IS DISTINCT FROM NEW.owner)
     EXECUTE FUNCTION brain_session_restated();
   INSERT INTO session_listing (session_id, owner, created_at, state)
     SELECT session_id, owner, created_at, CASE WHEN deleted THEN 2 WHEN turn_open THEN 1 ELSE 0 END FROM sessions;
   CREATE INDEX session_listing_all ON session_listing (state, created_at, session_id COLLATE "C");
   CREATE INDEX session_listing_owner ON session_listing (owner, state, created_at, session_id COLLATE "C");`,
  // Tenant limits (issue 32): the limits the operator set on a key itself, as a JSON object (KeyLimits).
  `ALTER TABLE keys ADD COLUMN limits TEXT;`,
  // Every feature on every node (issue 28): uploads and /ui logins any node reads (journal/shared-files.ts).
  SHARED_FILES_MIGRATION,
  // Cheaper commits (issue 28): a running session's row lags its records (headDue), and every reader
  // folds the records after it. Said in the schema, and a new version, so that a runtime from before
  // (which reads rows without folding) refuses to start on the database instead of misreading it.
  `COMMENT ON TABLE sessions IS 'One row per session: exact for a session without open work; for one with open work its counters (last_sequence, activations, model_requests, open_calls, open_model_requests) may lag: fold the journal records after last_sequence (Brain runtime, journal/postgres.ts headDue).';`,
];

/**
 * What a node's writes must prove (issue 20): the node holds each session's lease with this token
 * and its own lease has not expired, checked in the same transaction as the insert.
 */
export interface Fence {
  nodeId: string;
  /** The run this node's process joined with (cluster/leases.ts join); undefined before it joined. */
  run(): string | undefined;
  /**
   * The fencing token this node holds for the session now, read when a record is appended: the
   * record is written only if the lease still has that token at commit. A record admitted by an
   * earlier run of the session on this node (before it was let go and taken again) carries the old
   * token and is refused, so two runs never mix.
   */
  tokenOf(sessionId: string): number | undefined;
  /** Records refused because the fence failed: the session, and the token they were admitted under. */
  fenced(refused: Array<{ sessionId: string; token: number }>): void;
}

export interface PostgresStoreOptions {
  fence?: Fence;
  /**
   * A transaction left open longer than this is ended by the server (idle_in_transaction_session_timeout):
   * a node stopped (SIGSTOP) inside a commit must not hold its lease rows' locks, and so a takeover,
   * for longer than a lease.
   */
  idleTransactionTimeoutMs?: number;
  /** Writer connections (default 2): batches of different sessions commit side by side. */
  writers?: number;
  /** Fewest sessions per part when a batch is dealt out among writers (default 48). */
  minSessionsPerSplit?: number;
  /** How long after its last commit a row left saying "open work" is made exact (default 1000 ms; see SETTLE_MS). */
  settleMs?: number;
}

interface Pending extends PendingRecord {
  /** The session's fencing token when the record was appended (with a fence); -1: none held. */
  token: number;
}

/**
 * A batch's parameters. Its records are columns, each one array in PostgreSQL's binary format
 * (journal/pg-binary-arrays.ts), read back by unnest: $1 each record's session as its index (n)
 * into $2, the batch's session ids (an id travels once a batch, not with each record; heads name
 * sessions the same way), $4 sequence, $5 at, $6 type as an index into $9 (the batch's record
 * types), $7 and $8 the offset (from 1) and length of its data in $3, $10 a message's idempotency
 * key (NULL for other records). Binary columns need no text to be built, escaped or parsed either
 * side: a JSON text of the records read by json_to_recordset cost the server ~0.7 µs a record more
 * (its parse and a lookup per field), and the node as much to build. $3 is every record's data, the
 * JSON texts they are stored as, one after the other in one binary bytea (UTF-8): data inside a
 * JSON text would be escaped a second time by the node and unescaped character by character by the
 * server (json_lex: ~7 % of its CPU at small records, more at large ones), and a nested object
 * could not be used instead (PostgreSQL refuses \u0000 in a parsed string); the bytes are stored as
 * they are, so a record reads back byte-identical (JSON.stringify's text is valid UTF-8: it escapes
 * NUL and lone surrogates). With a fence, $11 each session's token (in $2's order: the token its
 * records were admitted under, one a session as a batch holds one run of each, dropStale), $12 the
 * node id, $13 its run. Then, only in the statements that use them (commitStatement), the heads
 * written as a JSON text (headsInsert; few a batch, none in most), and with a fence each session's
 * first sequence in the batch (a new session's lease is created with its first record).
 *
 * The journal rows are inserted straight from unnest, each record's data cut from $3 as it is
 * inserted: read twice (the fence's checks, the insert) from a CTE, the records were first copied,
 * data included, into the CTE's tuple store (~10 % of the server's CPU in a batch of 96 records).
 * The fence works on sessions, not records ($2 with $11), and names them by index. The columns are
 * unnested in a select list (a ProjectSet, which hands each row on as it is made; the arrays are
 * of one length, so they step together), not by unnest in FROM (a function scan, which first
 * copies every row into a tuple store, then sorted again by ordinality to keep the batch's order):
 * PostgreSQL's CPU per call ~7 % lower (store level, 14 simultaneous pairs). The rows go in
 * whatever order the plan gives: their order in the table means nothing, every read orders by
 * sequence.
 */
const JOURNAL_INSERT = `INSERT INTO journal (session_id, sequence, at, type, data, idempotency_key)
    SELECT ($2::text[])[r.n], r.q, r.a, ($9::text[])[r.t], convert_from(substring($3::bytea FROM r.o FOR r.l), 'UTF8'), r.y
    FROM (SELECT unnest($1::int4[]) AS n, unnest($4::int4[]) AS q, unnest($5::int8[]) AS a, unnest($6::int4[]) AS t, unnest($7::int4[]) AS o, unnest($8::int4[]) AS l, unnest($10::text[]) AS y) r`;

/** A head written with a batch (short keys: a batch's heads were a third of its bytes): n its session's index in $2, w its owner. */
interface HeadParam {
  n: number;
  c: number;
  q: number;
  v: number;
  m: number;
  o: number;
  p: number;
  r: boolean;
  x: boolean;
  w?: string;
}

/** The due heads' upsert, $`param` the heads; `where`: which of them (a condition on h.n, the session's index in $2). */
const headsInsert = (param: number, where: string) => `INSERT INTO sessions (session_id, created_at, last_sequence, activations, model_requests, open_calls, open_model_requests, turn_open, deleted, owner)
    SELECT ($2::text[])[h.n], h.c, h.q, h.v, h.m, h.o, h.p, h.r, h.x, h.w FROM json_to_recordset($${param}::json) AS h(n int, c bigint, q int, v int, m int, o int, p int, r bool, x bool, w text)
    ${where}
    ON CONFLICT (session_id) DO UPDATE SET created_at = EXCLUDED.created_at, last_sequence = EXCLUDED.last_sequence,
      activations = EXCLUDED.activations, model_requests = EXCLUDED.model_requests, open_calls = EXCLUDED.open_calls,
      open_model_requests = EXCLUDED.open_model_requests, turn_open = EXCLUDED.turn_open, deleted = EXCLUDED.deleted, owner = EXCLUDED.owner`;

/**
 * A session's row in `sessions` is written with a batch only when it is due: when its open work
 * appears (recovery's and the takeover scan's question: hasOpenWork), its listing state (status,
 * owner, creation) changes, its row says it has no open work (so a settled session's row is kept
 * exact), or the row lags HEAD_LAG records behind. Open work ending without a change of status (a
 * call outside a turn finishing) is not due: the row goes on saying "open work" and the session is
 * owed a settle (settleMs after its last commit, settleOwed), so a session making one call after
 * another outside a turn writes its row once per settle, not twice per call. The row never says
 * "no open work" while there is some; it may say "open work" for a moment after the work ended (or
 * for good if its node died before the settle: a takeover then finds none, and openWork folds).
 * What lags, while the row says "open work", is the counters (last sequence, activations, model
 * requests, open calls): whoever reads a head folds the records after the row's last_sequence
 * (LOAD_HEAD_SQL), at most HEAD_LAG - 1 of them. A running turn's batches then write journal rows
 * only: the upsert of every session in every batch was half of a batch's statement (EXPLAIN
 * ANALYZE) and a third of its bytes, and each open/close of a call outside a turn cost two non-HOT
 * row updates (~20 µs of the server's CPU per call).
 */
function headDue(stored: SessionHead | undefined, head: SessionHead): boolean {
  return (
    stored === undefined ||
    !hasOpenWork(stored) ||
    headStatus(stored) !== headStatus(head) ||
    stored.createdAt !== head.createdAt ||
    stored.owner !== head.owner ||
    head.lastSequence - stored.lastSequence >= HEAD_LAG
  );
}

/** A row that says "open work" for a head that has none: written by the next settle (settleOwed). */
function settleOwed(stored: SessionHead | undefined, head: SessionHead): boolean {
  return stored !== undefined && hasOpenWork(stored) && !hasOpenWork(head);
}

/** Most records a session's row in `sessions` lags behind while it has open work (headDue). */
const HEAD_LAG = 128;

/**
 * How long a session's row may go on saying "open work" after its last commit ended that work
 * (PostgresStoreOptions.settleMs): long enough that a session calling tool after tool outside a
 * turn is not settled between two calls (each settle and the next call's start are two row
 * updates), short enough that a node dying leaves few such rows for the takeover to look at.
 */
const SETTLE_MS = 1000;

/**
 * Owed rows made exact, one statement for all of them: $1 their heads (HeadParam, with k the token
 * each is held under), $2 their session ids. Only rows that still say less than the head are
 * written (never moved back), and only while no record follows the head (one probe of the
 * journal's key): whatever was committed after it, the row is left saying "open work". Answers the
 * sessions written.
 */
const SETTLE_SQL = `WITH h AS (
    SELECT ($2::text[])[h.n] AS session_id, h.* FROM json_to_recordset($1::json) AS h(n int, c bigint, q int, v int, m int, o int, p int, r bool, x bool, w text, k bigint))
  UPDATE sessions s SET last_sequence = h.q, activations = h.v, model_requests = h.m, open_calls = h.o, open_model_requests = h.p, turn_open = h.r, deleted = h.x
    FROM h WHERE s.session_id = h.session_id AND s.last_sequence <= h.q
      AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.session_id = h.session_id AND j.sequence > h.q)
  RETURNING s.session_id`;

/**
 * A node's settle, fenced as its batches are (fencedCommitSql): its own row locked FOR KEY SHARE,
 * this run's and unexpired, and each session's lease still this node's with the token it is held
 * under, so a takeover in between (which locks that row FOR UPDATE first) either waits for the
 * settle or makes it write nothing. $3 the node id, $4 its run.
 */
const FENCED_SETTLE_SQL = `WITH me AS (SELECT node_id FROM nodes WHERE node_id = $3 AND run = $4 AND expires_at > clock_timestamp() FOR KEY SHARE),
  h AS (
    SELECT ($2::text[])[h.n] AS session_id, h.* FROM json_to_recordset($1::json) AS h(n int, c bigint, q int, v int, m int, o int, p int, r bool, x bool, w text, k bigint)
     WHERE EXISTS (SELECT 1 FROM me) AND EXISTS (SELECT 1 FROM leases l WHERE l.session_id = ($2::text[])[h.n] AND l.owner || '' = $3 AND l.token = h.k))
  UPDATE sessions s SET last_sequence = h.q, activations = h.v, model_requests = h.m, open_calls = h.o, open_model_requests = h.p, turn_open = h.r, deleted = h.x
    FROM h WHERE s.session_id = h.session_id AND s.last_sequence <= h.q
      AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.session_id = h.session_id AND j.sequence > h.q)
  RETURNING s.session_id`;

/** Rows that say "open work", each folded forward over the records after it (openWork: a row may say so a moment too long). */
const OPEN_WORK_SQL = `SELECT s.*, (SELECT json_agg(json_build_array(j.sequence, j.type) ORDER BY j.sequence) FROM journal j WHERE j.session_id = s.session_id AND j.sequence > s.last_sequence) AS tail
  FROM sessions s WHERE NOT s.deleted AND (s.open_calls > 0 OR s.open_model_requests > 0 OR s.turn_open) ORDER BY s.session_id`;

/** A session's row, and the (sequence, type) of each record after it, from one snapshot (loadHead). */
const LOAD_HEAD_SQL = `SELECT s.*, (SELECT json_agg(json_build_array(j.sequence, j.type) ORDER BY j.sequence) FROM journal j WHERE j.session_id = s.session_id AND j.sequence > s.last_sequence) AS tail
  FROM sessions s WHERE s.session_id = $1`;

/**
 * A batch's statement, by what it has to do: a fence, heads due (most batches of a running session
 * have none: headDue), a session's first records (a new lease). Each is prepared once per writer
 * connection; a part a batch does not need is left out of its statement rather than run on no rows,
 * as setting up the unused inserts (leases, sessions: their indexes and triggers) was ~4 % of the
 * server's CPU at every batch. Their parameters follow batchMessage's ($14, $15 when present).
 */
function commitStatement(fenced: boolean, heads: boolean, fresh: boolean): { name: string; text: string } {
  const key = `${fenced ? "f" : ""}${heads ? "h" : ""}${fresh ? "n" : ""}`;
  let statement = COMMIT_STATEMENTS.get(key);
  if (statement === undefined) {
    let next = fenced ? 14 : 11;
    const headsParam = heads ? next++ : 0;
    const firstParam = fresh ? next++ : 0;
    const text = fenced ? fencedCommitSql(headsParam, firstParam) : commitSql(headsParam);
    COMMIT_STATEMENTS.set(key, (statement = { name: `brain_commit_${key}`, text }));
  }
  return statement;
}

const COMMIT_STATEMENTS = new Map<string, { name: string; text: string }>();

/** A batch without a fence (one store on the database): every session is written, none refused. `headsParam`: 0 for none. */
function commitSql(headsParam: number): string {
  if (headsParam === 0) return `WITH journal_rows AS (${JOURNAL_INSERT}) SELECT NULL::text AS session_id WHERE false`;
  return `WITH journal_rows AS (${JOURNAL_INSERT}),
  head_rows AS (${headsInsert(headsParam, "")})
  SELECT NULL::text AS session_id WHERE false`;
}

/**
 * A node's batch (JOURNAL_INSERT's parameters, with a fence). Answers the sessions refused
 * (usually none: an answer of every session written was 64 rows to send, read and parse a batch).
 * The fence is the node's own row, locked FOR KEY SHARE (so renewals never wait for it, and two
 * batches share it): the row must still be this run's and unexpired by the database's clock. A
 * takeover locks the old owner's row FOR UPDATE (cluster/leases.ts acquire), so it waits for every
 * batch holding the lock, and a batch that waited for a takeover re-reads the row (READ COMMITTED
 * re-checks a locked row's latest version) and finds it expired or another run's. Each session's
 * lease is then read by key, unlocked, for the token its records were admitted under; with
 * `firstParam` (a batch with a session's first records), a session whose first record in the batch
 * is its first (sequence 1), admitted under token 1, gets its lease created. 0: none of either.
 */
function fencedCommitSql(headsParam: number, firstParam: number): string {
  const sessions = firstParam === 0
    ? `s AS (SELECT u.id, u.k, u.n::int4 AS n FROM unnest($2::text[], $11::int8[]) WITH ORDINALITY AS u(id, k, n))`
    : `s AS (SELECT u.id, u.k, u.f, u.n::int4 AS n FROM unnest($2::text[], $11::int8[], $${firstParam}::int4[]) WITH ORDINALITY AS u(id, k, f, n)),
  fresh AS (
    INSERT INTO leases (session_id, owner, token)
    SELECT s.id, $12, 1::bigint FROM s
     WHERE s.f = 1 AND s.k = 1 AND EXISTS (SELECT 1 FROM me)
    ON CONFLICT (session_id) DO NOTHING
    RETURNING session_id, token)`;
  const fresh = firstParam === 0 ? "" : `
    UNION ALL SELECT s.n FROM s JOIN fresh f ON f.session_id = s.id AND f.token = s.k`;
  return `WITH me AS (SELECT node_id FROM nodes WHERE node_id = $12 AND run = $13 AND expires_at > clock_timestamp() FOR KEY SHARE),
  ${sessions},
  -- Each session's lease by primary key, the owner checked after: the cost follows the batch, never
  -- the leases the node holds (a condition on owner alone lets the planner pick leases_owner). A
  -- correlated EXISTS, not a join with the batch's leases: a generic plan estimates one lease and
  -- joined them in a nested loop comparing every session with every lease.
  ok AS (
    SELECT s.n FROM s
     WHERE EXISTS (SELECT 1 FROM me) AND EXISTS (SELECT 1 FROM leases l WHERE l.session_id = s.id AND l.owner || '' = $12 AND l.token = s.k)${fresh}),
  journal_rows AS (${JOURNAL_INSERT} WHERE r.n IN (SELECT n FROM ok))${headsParam === 0 ? "" : `,
  head_rows AS (${headsInsert(headsParam, "WHERE h.n IN (SELECT n FROM ok)")})`}
  SELECT s.id AS session_id FROM s WHERE s.n NOT IN (SELECT n FROM ok)`;
}

interface HeadRow {
  session_id: string;
  created_at: string;
  last_sequence: number;
  activations: number;
  model_requests: number;
  open_calls: number;
  open_model_requests: number;
  turn_open: boolean;
  deleted: boolean;
  owner: string | null;
}


/**
 * The pool every read, lease and registry statement goes through. A database that is down or
 * restarting answers `unavailable` (503, retryable: pg-errors.ts), never the driver's own error,
 * which the routes would have to call `internal`.
 */
class ReaderPool extends pg.Pool {
  // pg's query() has callback and promise overloads; Brain only uses the promise form.
  override query(...args: unknown[]): any {
    const r = (super.query as (...a: unknown[]) => unknown)(...args);
    return r instanceof Promise ? r.catch((e: unknown) => Promise.reject(storeError(e))) : r;
  }
}

/**
 * The journal on PostgreSQL (for several runtime nodes on one database, issue 20). The same
 * contract as the SQLite store, with asynchronous reads:
 * - Group commit over two writer connections: the appends of one turn of the event loop go into
 *   one transaction on the next turn, unless both writers are free and the batch has at least
 *   2 × MIN_SESSIONS_PER_SPLIT sessions: then its sessions are dealt out between the two, which
 *   commit side by side. While one batch commits, another starts on the other writer only if it
 *   has MIN_SESSIONS_PER_SPLIT sessions; smaller ones wait and go with the sessions it frees. A
 *   session's records are in one batch in flight at a time; those appended meanwhile wait for it,
 *   so a session's records commit in order, and a batch grows with the commit latency. `append`
 *   resolves only after COMMIT. (Lock-step work, where every session waits on the same commit,
 *   would otherwise keep the node and the database taking turns on one core each.)
 * - Records are keyed by (session, sequence): a read of one session is one index range scan of its
 *   own rows. Record data is kept as the JSON text written (not jsonb), so it reads back byte-identical.
 * - Each session's head (journal/head.ts) is written in the same transaction as its records when it
 *   is due (headDue): the sessions table always says which sessions have open work (recovery's and
 *   the takeover scan's question; a row may go on saying so up to settleMs after the work ended,
 *   then a settle writes it) and exactly in which listing state; a running session's counters may
 *   lag a few records, and every read of a head folds the records after its row (loadHead).
 * - With a `fence` (several nodes, cluster/): every batch proves, in its own transaction, that this
 *   node holds each session's lease (fencedCommitSql); records of a session it lost are refused.
 * - Listing is one statement a page: one index range per state over session_listing's indexes (a
 *   table the triggers on `sessions` keep: a row changes when a session's state does, not at every
 *   commit), then each listed session's head and session.created row by key (listingSql).
 */
export class PostgresStore {
  readonly kind = "postgres" as const;
  readonly stats: StoreStats = { transactions: 0, records: 0, rowsRead: 0, headsLoaded: 0, headsListed: 0 };
  private pending: Pending[] = [];
  /** Batches being committed, each on its own writer connection. */
  private inFlight = new Set<Promise<void>>();
  /** Sessions with records in a batch in flight: their later records wait for it (one batch per session at a time). */
  private busy = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  /** Heads of the sessions this store wrote, as committed (loaded, folded, on first write). */
  private heads = new Map<string, SessionHead>();
  /** The same sessions' rows in the sessions table, as last written or read (see headDue). */
  private stored = new Map<string, SessionHead>();
  /** Sessions whose row says "open work" and whose head has none (settleOwed), by when that commit ended. */
  private owed = new Map<string, number>();
  private settleTimer: NodeJS.Timeout | undefined;
  /** The settle in flight (one at a time; its sessions are in `busy` meanwhile). */
  private settling: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private url: string,
    /**
     * The writer connections: while one batch commits, the records of other sessions form the next
     * batch on another connection, so the node's work and the database's overlap.
     */
    private writers: Writer[],
    /** Reads, and the node's lease statements (cluster/leases.ts). */
    readonly readers: pg.Pool,
    private fence: Fence | undefined,
    private idleTransactionTimeoutMs: number | undefined,
    private minSessionsPerSplit: number,
    private settleMs: number,
  ) {
    this.shared = new PgSharedFiles(readers);
  }

  /** Uploads and /ui logins every node reads (several nodes: issue 28). */
  readonly shared: PgSharedFiles;

  /** Connects, applies missing migrations, and returns the store. */
  static async open(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const writers: Writer[] = [];
    try {
      for (let i = 0; i < (opts.writers ?? WRITERS); i++) {
        const w = { broken: false, busy: false, out: undefined } as Writer;
        w.client = await connectWriter(url, opts.idleTransactionTimeoutMs, () => (w.broken = true));
        writers.push(w);
        if (i === 0) await migrate(w.client);
      }
    } catch (e) {
      for (const w of writers) await w.client.end().catch(() => {});
      throw e;
    }
    const readers = new ReaderPool({ connectionString: url, max: 4 });
    readers.on("error", () => {});
    return new PostgresStore(url, writers, readers, opts.fence, opts.idleTransactionTimeoutMs, opts.minSessionsPerSplit ?? MIN_SESSIONS_PER_SPLIT, opts.settleMs ?? SETTLE_MS);
  }

  /** Told of each group commit (telemetry); see RecordStore.observeCommits. */
  observer: CommitObserver | undefined;

  /**
   * Told of every record whose append fails (the batch failed, its lease or its order was refused,
   * the store is closed), with the fencing token it was admitted under (undefined: none; see refuse):
   * the node stops running its session (cluster/node-journal.ts) without a promise chained on each
   * append (three a tool call) to find out.
   */
  failed: ((sessionId: string, token: number | undefined) => void) | undefined;

  append(record: JournalRecord, onCommit?: CommitHook): Promise<JournalRecord> {
    const token = this.fence?.tokenOf(record.sessionId) ?? -1;
    if (this.closed) {
      const closed = new Promise<JournalRecord>((resolve, reject) => this.refuse({ record, token, resolve, reject, onCommit }, new BrainRuntimeError("unavailable", "the journal is closed: the runtime is shutting down", undefined, true)));
      return closed;
    }
    deepFreeze(record);
    return new Promise((resolve, reject) => {
      this.pending.push({ record, token, resolve, reject, onCommit });
      this.schedule();
    });
  }

  /**
   * Rejects a pending record, and tells `failed` in a microtask queued after the rejection's own
   * reactions begin, as a handler chained on the append would be: never in the middle of this
   * store's loop over a batch, and before anything awaiting the record's commit sees the failure.
   */
  private refuse(p: Pending, e: unknown): void {
    p.reject(e);
    const failed = this.failed;
    if (failed !== undefined) void Promise.resolve().then(() => failed(p.record.sessionId, p.token === -1 ? undefined : p.token));
  }

  private schedule(): void {
    if (this.scheduled !== undefined || this.pending.length === 0 || !this.writers.some((w) => !w.busy)) return;
    // setImmediate: every append of this turn of the event loop joins the batch.
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      const free = this.writers.filter((w) => !w.busy);
      // A batch takes every pending record of its sessions, in order, and only sessions with no batch
      // in flight: one batch holds a session's records from one head, so heads and fences stay per batch.
      const ready: Pending[] = [];
      const waiting: Pending[] = [];
      const sessions = new Set<string>();
      for (const p of this.pending) {
        const id = p.record.sessionId;
        if (this.busy.has(id)) waiting.push(p);
        else ready.push(p), sessions.add(id);
      }
      if (sessions.size === 0 || free.length === 0) return;
      // While a batch commits, a second one starts beside it only if it is large: a transaction's
      // fixed cost (mostly the WAL flush) is paid per batch, so the few sessions ready now wait for
      // the batch in flight and go with the ones it frees (its end schedules again).
      if (this.inFlight.size > 0 && sessions.size < this.minSessionsPerSplit) return;
      this.pending = waiting;
      // With several writers free, the sessions are dealt out among them: the batches commit side
      // by side (one database backend each), and their sessions fall out of step, so later batches
      // overlap with the node's own work instead of all waiting for the same commit.
      const parts = Math.min(free.length, Math.max(1, Math.floor(sessions.size / this.minSessionsPerSplit)));
      // One batch (below 2 × minSessionsPerSplit sessions, the usual case): the ready records as they are.
      if (parts === 1) return this.launch(free[0]!, ready, sessions);
      const partOf = new Map<string, number>();
      const parted = Array.from({ length: parts }, () => ({ batch: [] as Pending[], sessions: new Set<string>() }));
      let k = 0;
      for (const id of sessions) {
        partOf.set(id, k % parts);
        parted[k++ % parts]!.sessions.add(id);
      }
      for (const p of ready) parted[partOf.get(p.record.sessionId)!]!.batch.push(p);
      parted.forEach((part, i) => this.launch(free[i]!, part.batch, part.sessions));
    });
  }

  /** Commits `batch` (the records of `sessions`, none of them busy) on `writer`. */
  private launch(writer: Writer, batch: Pending[], sessions: Set<string>): void {
    for (const id of sessions) this.busy.add(id);
    writer.busy = true;
    const done: Promise<void> = this.commit(writer, batch).finally(() => {
      for (const id of sessions) this.busy.delete(id);
      writer.busy = false;
      this.inFlight.delete(done);
      this.schedule();
    });
    this.inFlight.add(done);
  }

  /**
   * One batch is ONE statement (so one round trip, and one implicit transaction): the fence (with a
   * fence), the journal rows and the sessions' heads, through data-modifying CTEs. With a fence, the
   * statement locks this node's own row (this run's, unexpired by the database's clock), reads the
   * batch's leases (held by this node, with the token each record was admitted under), creates the
   * leases of new sessions (token 1), and writes only the sessions that passed; it answers which.
   * A takeover locks the old owner's row, so it waits for the statement: a record is either
   * committed before a takeover (and the new owner reads it) or refused. Heads are computed here beforehand
   * from cached or preloaded heads; nothing is read while the statement runs.
   */
  private async commit(w: Writer, all: Pending[]): Promise<void> {
    let batch = all;
    const startedAt = performance.now();
    try {
      if (this.fence !== undefined) batch = this.dropStale(all, this.fence);
      if (batch.length === 0) return;
      const records = batch.map((p) => p.record);
      // Heads not cached yet (a session new to this store), each read once.
      let read: Set<string> | undefined;
      for (const r of records) {
        const id = r.sessionId;
        if (this.heads.has(id) || read?.has(id)) continue;
        (read ??= new Set()).add(id);
        const known = await this.loadHead(id);
        if (known !== undefined) this.heads.set(id, known.head), this.stored.set(id, known.row);
      }
      const { heads, outOfStep } = this.advance(records);
      if (outOfStep.size > 0) batch = this.refuseOutOfStep(batch, outOfStep);
      if (batch.length === 0) return;
      const sessions = [...heads.values()];
      // Only the heads due (headDue): most batches of a running turn write none.
      const due = sessions.filter((h) => headDue(this.stored.get(h.sessionId), h));
      const { message, statement, buffer } = batchMessage(w.out, batch, sessions, due, this.fence);
      // Kept for the writer's next batch (pg-batch-query.ts), unless it grew out of bounds.
      w.out = buffer.length <= KEPT_MESSAGE_BYTES ? buffer : w.out;
      const writer = w.broken ? await this.liveWriter(w) : w.client;
      // Named: prepared once per connection. Planning this statement took twice as long as running it.
      const answered = await writer.query(new BatchQuery(statement.name, statement.text, message)).done;
      // The answer names the sessions refused (usually none); every other session of the batch was written.
      const refusedIds = answered.length === 0 ? undefined : new Set(answered);
      const written = (id: string) => refusedIds === undefined || !refusedIds.has(id);
      for (const h of due) if (written(h.sessionId)) this.stored.set(h.sessionId, h);
      const now = performance.now();
      for (const h of sessions) {
        if (!written(h.sessionId)) continue;
        this.heads.set(h.sessionId, h);
        if (settleOwed(this.stored.get(h.sessionId), h)) this.owed.set(h.sessionId, now);
        else this.owed.delete(h.sessionId);
      }
      if (this.owed.size > 0) this.armSettle();
      this.stats.transactions += 1;
      this.stats.records += refusedIds === undefined ? batch.length : batch.filter((p) => written(p.record.sessionId)).length;
      this.observer?.(records, startedAt, (performance.now() - startedAt) / 1000);
      if (refusedIds === undefined) {
        for (const p of batch) settleCommitted(p);
        return;
      }
      const refused = new Map<string, { sessionId: string; token: number }>();
      for (const p of batch) {
        if (written(p.record.sessionId)) {
          settleCommitted(p);
          continue;
        }
        refused.set(`${p.record.sessionId} ${p.token}`, { sessionId: p.record.sessionId, token: p.token });
        this.refuse(p, new LeaseLostError(p.record.sessionId));
      }
      if (refused.size > 0) {
        for (const r of refused.values()) this.forgetHead(r.sessionId);
        this.fence?.fenced([...refused.values()]);
      }
    } catch (e) {
      // A message the server did not read to its end may still be in a socket's hands: not reused.
      w.out = undefined;
      // A broken connection (no SQLSTATE: reset, terminated, timed out) is replaced for the next batch.
      if (!(typeof (e as { code?: unknown }).code === "string" && /^[0-9A-Z]{5}$/.test((e as { code: string }).code))) w.broken = true;
      this.observer?.(batch.map((p) => p.record), startedAt, (performance.now() - startedAt) / 1000, e);
      const failure = storeError(e, true);
      for (const p of batch) this.refuse(p, failure);
    }
  }

  /**
   * Refuses at once the records admitted under a token this node no longer holds for their session
   * (an earlier run of a session it has since let go of and taken again): they can never be written,
   * and a batch holds one run per session, so its heads are consistent.
   */
  private dropStale(batch: Pending[], fence: Fence): Pending[] {
    const kept: Pending[] = [];
    const refused = new Map<string, { sessionId: string; token: number }>();
    for (const p of batch) {
      if (fence.tokenOf(p.record.sessionId) === p.token && p.token !== -1) kept.push(p);
      else {
        refused.set(`${p.record.sessionId} ${p.token}`, { sessionId: p.record.sessionId, token: p.token });
        this.refuse(p, new LeaseLostError(p.record.sessionId));
      }
    }
    if (refused.size > 0) fence.fenced([...refused.values()]);
    return kept;
  }

  /** A writer's connection, reconnected if the last one broke. */
  private async liveWriter(w: Writer): Promise<pg.Client> {
    if (!w.broken) return w.client;
    const old = w.client;
    w.client = await connectWriter(this.url, this.idleTransactionTimeoutMs, () => (w.broken = true));
    w.broken = false;
    void old.end().catch(() => {});
    return w.client;
  }

  /** Forgets a session's cached head: another node may have written it since (a takeover back). */
  forgetHead(sessionId: string): void {
    this.heads.delete(sessionId);
    this.stored.delete(sessionId);
    this.owed.delete(sessionId);
  }

  private armSettle(): void {
    if (this.settleTimer !== undefined || this.closed) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.settle(false);
    }, this.settleMs);
    // A pending settle never keeps the process alive (close settles what is owed).
    this.settleTimer.unref();
  }

  /**
   * Writes the owed rows (settleOwed) of sessions quiet for settleMs (`all`: every owed one, at
   * close) with their committed heads, in one statement on a reader connection; their sessions are
   * busy meanwhile, so no batch of theirs runs beside it. A session with records waiting is left to
   * them. A failure leaves the rows saying "open work" (safe: readers fold) for the next settle.
   */
  private settle(all: boolean): Promise<void> {
    if (this.settling !== undefined) return this.settling;
    const now = performance.now();
    const waiting = new Set(this.pending.map((p) => p.record.sessionId));
    const heads: Array<HeadParam & { k: number }> = [];
    const ids: string[] = [];
    for (const [id, at] of this.owed) {
      if (!all && now - at < this.settleMs) continue;
      const head = this.heads.get(id);
      const token = this.fence === undefined ? -1 : this.fence.tokenOf(id);
      if (head === undefined || token === undefined || !settleOwed(this.stored.get(id), head)) {
        this.owed.delete(id);
        continue;
      }
      if (this.busy.has(id) || waiting.has(id)) continue;
      const n = ids.push(id);
      const row: HeadParam & { k: number } = { n, c: head.createdAt, q: head.lastSequence, v: head.activations, m: head.modelRequests, o: head.openCalls, p: head.openModelRequests, r: head.turnOpen, x: head.deleted, k: token };
      heads.push(row);
    }
    if (ids.length === 0) {
      if (this.owed.size > 0) this.armSettle();
      return Promise.resolve();
    }
    const settled = ids.map((id) => ({ ...this.heads.get(id)! }));
    for (const id of ids) this.busy.add(id);
    const values: unknown[] = [JSON.stringify(heads), ids];
    if (this.fence !== undefined) values.push(this.fence.nodeId, this.fence.run() ?? "");
    const run = (async () => {
      try {
        const { rows } = await this.readers.query<{ session_id: string }>(
          this.fence === undefined ? { name: "brain_settle", text: SETTLE_SQL, values } : { name: "brain_fenced_settle", text: FENCED_SETTLE_SQL, values },
        );
        const written = new Set(rows.map((r) => r.session_id));
        for (const h of settled) {
          // Not written: the lease is gone (the next batch is refused), or another writer moved the row on.
          if (written.has(h.sessionId) && this.heads.get(h.sessionId)?.lastSequence === h.lastSequence) this.stored.set(h.sessionId, h);
          this.owed.delete(h.sessionId);
        }
      } catch {
        // The database is unavailable: the rows stay saying "open work" (readers fold), retried at the next settle.
      } finally {
        for (const id of ids) this.busy.delete(id);
        this.settling = undefined;
        if (this.owed.size > 0) this.armSettle();
        this.schedule();
      }
    })();
    this.settling = run;
    return run;
  }

  /**
   * The heads after `records` (copies: nothing changes in memory until the batch committed), and
   * the sessions whose records do not follow their head one by one (see refuseOutOfStep).
   */
  private advance(records: JournalRecord[]): { heads: Map<string, SessionHead>; outOfStep: Set<string> } {
    const heads = new Map<string, SessionHead>();
    const outOfStep = new Set<string>();
    for (const r of records) {
      if (outOfStep.has(r.sessionId)) continue;
      let h = heads.get(r.sessionId);
      if (h === undefined) {
        const known = this.heads.get(r.sessionId);
        heads.set(r.sessionId, (h = known === undefined ? newHead(r.sessionId) : copyHead(known)));
      }
      if (r.sequence !== h.lastSequence + 1) {
        outOfStep.add(r.sessionId);
        heads.delete(r.sessionId);
        continue;
      }
      advanceHead(h, r);
    }
    return { heads, outOfStep };
  }

  /**
   * A session whose records do not follow its head (a gap, or a sequence already written) was run
   * from a memory that fell out of step with the database: a run that kept going after one of its
   * writes failed, or one that read its head before another node wrote. Writing would break the
   * journal, so its records are refused `unavailable` (the client retries), its cached head is
   * dropped, and with a fence the node stops running it (NodeJournal.lose), so it is read afresh.
   * The batch's other sessions are written as usual.
   */
  private refuseOutOfStep(batch: Pending[], stale: Set<string>): Pending[] {
    const kept: Pending[] = [];
    const refused = new Map<string, { sessionId: string; token: number }>();
    for (const p of batch) {
      const id = p.record.sessionId;
      if (!stale.has(id)) {
        kept.push(p);
        continue;
      }
      refused.set(`${id} ${p.token}`, { sessionId: id, token: p.token });
      this.refuse(p, outOfStep(p.record));
    }
    for (const { sessionId } of refused.values()) this.forgetHead(sessionId);
    this.fence?.fenced([...refused.values()]);
    return kept;
  }

  /**
   * A session's head: its row in the sessions table, folded forward over the records written after
   * it (a running session's row may lag: headDue), read in one statement, so from one snapshot.
   * `row` is the row as stored.
   */
  private async loadHead(sessionId: string): Promise<{ head: SessionHead; row: SessionHead } | undefined> {
    const { rows } = await this.readers.query<HeadRow & { tail: Array<[number, string]> | null }>({ name: "brain_load_head", text: LOAD_HEAD_SQL, values: [sessionId] });
    this.stats.headsLoaded += 1;
    if (rows[0] === undefined) return undefined;
    const row = headOf(rows[0]);
    const head = { ...row };
    for (const [sequence, type] of rows[0].tail ?? []) advanceHead(head, { sequence, at: 0, type: type as JournalRecord["type"] });
    this.stats.rowsRead += rows[0].tail?.length ?? 0;
    return { head, row };
  }

  async read(sessionId: string, after = 0, through = Number.MAX_SAFE_INTEGER): Promise<JournalRecord[]> {
    const upto = Math.min(through, 2 ** 31 - 1);
    if (upto <= after) return [];
    const { rows } = await this.readers.query<{ sequence: number; at: string; type: string; data: string }>(
      "SELECT sequence, at, type, data FROM journal WHERE session_id = $1 AND sequence > $2 AND sequence <= $3 ORDER BY sequence",
      [sessionId, after, upto],
    );
    this.stats.rowsRead += rows.length;
    return rows.map((r) => ({ sessionId, sequence: r.sequence, at: Number(r.at), type: r.type, data: JSON.parse(r.data) }) as JournalRecord);
  }

  async findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined> {
    // One entry of journal_message_keys (its condition is implied by the equality).
    const { rows } = await this.readers.query<{ sequence: number; data: string }>(
      "SELECT sequence, data FROM journal WHERE session_id = $1 AND idempotency_key = $2 LIMIT 1",
      [sessionId, key],
    );
    if (rows[0] === undefined) return undefined;
    this.stats.rowsRead += 1;
    const data = JSON.parse(rows[0].data) as { text: string; activation: number };
    return { sequence: rows[0].sequence, activation: data.activation, text: data.text };
  }

  async head(sessionId: string): Promise<SessionHead | undefined> {
    const mine = this.heads.get(sessionId);
    if (mine !== undefined) return { ...mine };
    const token = this.fence?.tokenOf(sessionId);
    const loaded = await this.loadHead(sessionId);
    if (loaded === undefined) return undefined;
    // A session this node holds (just taken over, or paged in): kept as a commit's first load keeps
    // it, unless a batch of it ran meanwhile or it changed hands; a row its dead owner left saying
    // "open work" is settled, so it is not taken over again at the next crash.
    if (token !== undefined && this.fence!.tokenOf(sessionId) === token && !this.heads.has(sessionId) && !this.busy.has(sessionId)) {
      this.heads.set(sessionId, loaded.head);
      this.stored.set(sessionId, loaded.row);
      if (settleOwed(loaded.row, loaded.head)) {
        this.owed.set(sessionId, performance.now());
        this.armSettle();
      }
    }
    return { ...loaded.head };
  }

  /**
   * The sessions whose rows say "open work", each folded forward (a row may say so a moment after
   * the work ended: headDue), so exactly those with open work. Without a fence (this store the
   * only writer) a row found saying so too long is owed a settle, and written at the next one.
   */
  async openWork(): Promise<string[]> {
    const { rows } = await this.readers.query<HeadRow & { tail: Array<[number, string]> | null }>(OPEN_WORK_SQL);
    const open: string[] = [];
    for (const r of rows) {
      const row = headOf(r);
      const head = { ...row };
      for (const [sequence, type] of r.tail ?? []) advanceHead(head, { sequence, at: 0, type: type as JournalRecord["type"] });
      this.stats.rowsRead += 1 + (r.tail?.length ?? 0);
      if (hasOpenWork(head)) open.push(head.sessionId);
      else if (this.fence === undefined && !this.heads.has(head.sessionId) && !this.busy.has(head.sessionId)) {
        this.heads.set(head.sessionId, head);
        this.stored.set(head.sessionId, row);
        this.owed.set(head.sessionId, -Infinity);
      }
    }
    if (this.owed.size > 0) this.armSettle();
    return open;
  }

  /** One page in one statement (listingSql): a session's status in the sessions table is exact (headDue), its last sequence read from the journal. */
  async listSessions(query: ListQuery): Promise<SessionPage> {
    const statuses = query.status === undefined ? STATUSES : [query.status];
    const values: unknown[] = [query.limit + 1];
    if (query.owner !== undefined) values.push(query.owner);
    if (query.after !== undefined) values.push(query.after.createdAt, query.after.sessionId);
    const name = `brain_list_${query.owner !== undefined ? "o" : "a"}${query.after !== undefined ? "c" : ""}_${statuses.map((s) => STATE[s]).join("")}`;
    const { rows } = await this.readers.query<{ head: HeadRow | null; created: string | null; last: number | null }>({ name, text: listingSql(query.owner !== undefined, query.after !== undefined, statuses), values });
    this.stats.headsListed += rows.length;
    this.stats.rowsRead += rows.length;
    // A running session's row may lag (headDue): its last sequence is the journal's.
    const found = rows.flatMap((r) => (r.head === null || r.created === null ? [] : [{ head: { ...headOf(r.head), lastSequence: Math.max(r.head.last_sequence, r.last ?? 0) }, created: JSON.parse(r.created) as SessionCreatedRecord["data"] }]));
    return pageOf(found, query.limit);
  }

  /** Every session id, deleted ones included, newest first: O(sessions), for tests and tools (listing pages with `listSessions`). */
  async sessionIds(): Promise<string[]> {
    const { rows } = await this.readers.query<{ session_id: string }>("SELECT session_id FROM sessions ORDER BY created_at DESC, session_id");
    return rows.map((r) => r.session_id);
  }

  async saveHost(row: HostRow): Promise<void> {
    await this.readers.query(
      "INSERT INTO hosts (host_id, salt, hash, contracts, registered_at, owner) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (host_id) DO UPDATE SET contracts = EXCLUDED.contracts",
      [row.hostId, row.salt, row.hash, JSON.stringify(row.contracts), row.registeredAt, row.owner ?? null],
    );
  }

  async deleteHost(hostId: string): Promise<void> {
    await this.readers.query("DELETE FROM hosts WHERE host_id = $1", [hostId]);
  }

  async loadHosts(): Promise<HostRow[]> {
    const { rows } = await this.readers.query<{ host_id: string; salt: string; hash: string; contracts: string; registered_at: string; owner: string | null }>("SELECT * FROM hosts");
    return rows.map((r) => ({ hostId: r.host_id, salt: r.salt, hash: r.hash, contracts: JSON.parse(r.contracts), registeredAt: Number(r.registered_at), ...(r.owner === null ? {} : { owner: r.owner }) }));
  }

  async saveKey(row: KeyRow): Promise<void> {
    // A revocation is for good: a node writing a key's limits from a row read before another node
    // revoked it keeps the revocation.
    await this.readers.query(
      "INSERT INTO keys (key_id, name, hash, created_at, revoked_at, limits) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id) DO UPDATE SET revoked_at = coalesce(keys.revoked_at, EXCLUDED.revoked_at), limits = EXCLUDED.limits",
      [row.keyId, row.name, row.hash, row.createdAt, row.revokedAt ?? null, row.limits === undefined ? null : JSON.stringify(row.limits)],
    );
  }

  async loadKeys(): Promise<KeyRow[]> {
    const { rows } = await this.readers.query<{ key_id: string; name: string; hash: string; created_at: string; revoked_at: string | null; limits: string | null }>("SELECT * FROM keys");
    return rows.map((r) => ({ keyId: r.key_id, name: r.name, hash: r.hash, createdAt: Number(r.created_at), ...(r.revoked_at === null ? {} : { revokedAt: Number(r.revoked_at) }), ...(r.limits === null ? {} : { limits: JSON.parse(r.limits) as KeyLimits }) }));
  }

  /** Every node's sessions of the owner, from the owner listing index (state 2: deleted). */
  async countOpenSessions(owner: string): Promise<number> {
    const { rows } = await this.readers.query<{ n: string }>({ name: "brain_count_open", text: "SELECT count(*) AS n FROM session_listing WHERE owner = $1 AND state <> 2", values: [owner] });
    return Number(rows[0]?.n ?? 0);
  }

  /** By the journal's primary key (session_id, sequence): only that session's rows. */
  async journalBytes(sessionId: string, through: number): Promise<number> {
    const { rows } = await this.readers.query<{ n: string | null }>({ name: "brain_journal_bytes", text: "SELECT sum(octet_length(data)) AS n FROM journal WHERE session_id = $1 AND sequence <= $2", values: [sessionId, through] });
    return Number(rows[0]?.n ?? 0);
  }

  /** Resolves once everything appended so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0 || this.scheduled !== undefined || this.pending.length > 0) {
      if (this.inFlight.size === 0 && this.scheduled === undefined) this.schedule();
      // Records of a session being settled wait for the settle.
      await (this.inFlight.size > 0 ? Promise.race(this.inFlight) : (this.settling ?? new Promise((r) => setImmediate(r))));
    }
  }

  /**
   * Writes every owed row now (settleOwed), whatever its age: a clean stop leaves every row exact,
   * nothing for recovery or a takeover to look at. A node calls it before its lease ends (its
   * settle is fenced); close calls it too.
   */
  async settleAll(): Promise<void> {
    await this.settling;
    await this.settle(true);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.settleAll();
    this.closed = true;
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    for (const w of this.writers) await w.client.end();
    await this.readers.end();
  }
}

/** Largest message buffer a writer keeps for its next batch; a larger batch's is allocated for it alone. */
const KEPT_MESSAGE_BYTES = 1 << 20;

/** Writer connections of a store (PostgresStoreOptions.writers). */
const WRITERS = 2;
/**
 * A batch is dealt out among free writers only while each part keeps at least this many sessions:
 * a transaction's fixed cost is shared by its sessions, so smaller batches stay whole. With
 * PostgreSQL's default durability that cost is mostly the commit's WAL flush (fdatasync): about
 * 0.9 ms of the server's CPU per transaction here, 0.4 ms with fsync off. At 24, 64 sessions in
 * lock-step split into two halves committing side by side, twice the transactions: CPU per call
 * (node + PostgreSQL) was 16–30 % higher than with the 64 in one batch, in the same quarter hour.
 */
const MIN_SESSIONS_PER_SPLIT = 48;

interface Writer {
  client: pg.Client;
  /** The buffer its batches' messages are written into (batchMessage), reused: one batch in flight on a writer at a time. */
  out: Buffer | undefined;
  /** Its connection failed; replaced before the next batch. */
  broken: boolean;
  /** A batch is in flight on it. */
  busy: boolean;
}

/** A writer's connection; `broken` is called when it fails (never an unhandled 'error'). */
async function connectWriter(url: string, idleTransactionTimeoutMs: number | undefined, broken: () => void): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  // A failed connection (a server restarting) is reported by the next query, and replaced before the next batch.
  client.on("error", broken);
  await client.connect();
  try {
    if (idleTransactionTimeoutMs !== undefined) await client.query(`SET idle_in_transaction_session_timeout = ${Math.max(1, Math.floor(idleTransactionTimeoutMs))}`);
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  return client;
}

async function migrate(client: pg.Client): Promise<void> {
  // One migrator at a time across nodes: an advisory lock held for the migration.
  await client.query("SELECT pg_advisory_lock(4242001)");
  try {
    await client.query("CREATE TABLE IF NOT EXISTS brain_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const { rows } = await client.query<{ value: string }>("SELECT value FROM brain_meta WHERE key = 'schema_version'");
    const version = rows[0] === undefined ? 0 : Number(rows[0].value);
    if (version > MIGRATIONS.length) throw new BrainRuntimeError("unsupported", `the database's Brain schema is version ${version}, newer than this runtime's ${MIGRATIONS.length}`);
    for (let v = version; v < MIGRATIONS.length; v++) {
      await client.query("BEGIN");
      try {
        await client.query(MIGRATIONS[v]!);
        await client.query("INSERT INTO brain_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [String(v + 1)]);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {});
        throw e;
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock(4242001)");
  }
}

/**
 * A batch's statement (JOURNAL_INSERT's parameters, then commitStatement's) as one Bind message
 * with Execute and Sync (journal/pg-batch-query.ts), written into `buffer` when it is large enough
 * (a writer's own, reused batch after batch), else into one allocated for it. `sessions` every
 * session of the batch, `due` the heads written. Built for the node's CPU (a batch is ~100 records,
 * hundreds of batches a second): the records' columns are binary arrays, and each record's data
 * text is encoded straight into the message (`write` answers its bytes: no separate byte count,
 * join, second encoding or copy).
 */
function batchMessage(buffer: Buffer | undefined, batch: Pending[], sessions: SessionHead[], due: SessionHead[], fence: Fence | undefined): { message: Buffer; statement: { name: string; text: string }; buffer: Buffer } {
  const index = new Map<string, number>();
  const ids: string[] = [];
  for (const h of sessions) index.set(h.sessionId, ids.push(h.sessionId));
  const count = batch.length;
  const texts = new Array<string>(count);
  const keys = new Array<string | undefined>(count);
  const types: string[] = [];
  const typeIndex = new Map<string, number>();
  const n = new Int4Column(count);
  const q = new Int4Column(count);
  const a = new Int8Column(count);
  const t = new Int4Column(count);
  const o = new Int4Column(count);
  const l = new Int4Column(count);
  // With a fence, each session's token and first sequence in the batch (its first record's: every
  // session of `sessions` has records in the batch, in order, all admitted under one token).
  const sessionCount = ids.length;
  const k = fence === undefined ? undefined : new Int8Column(sessionCount);
  const f = fence === undefined ? undefined : new Int4Column(sessionCount);
  const first = fence === undefined ? undefined : new Uint8Array(sessionCount + 1);
  let fresh = false;
  let chars = 0;
  for (let i = 0; i < count; i++) {
    const { record, token } = batch[i]!;
    const text = JSON.stringify(record.data);
    texts[i] = text;
    chars += text.length;
    const s = index.get(record.sessionId)!;
    let type = typeIndex.get(record.type);
    if (type === undefined) typeIndex.set(record.type, (type = types.push(record.type)));
    n.set(i, s);
    q.set(i, record.sequence);
    a.set(i, record.at);
    t.set(i, type);
    if (first !== undefined && first[s] === 0) {
      first[s] = 1;
      k!.set(s - 1, token);
      f!.set(s - 1, record.sequence);
      if (record.sequence === 1 && token === 1) fresh = true;
    }
    keys[i] = keyOf(record);
  }
  const heads = due.map((h): HeadParam => {
    const row: HeadParam = { n: index.get(h.sessionId)!, c: h.createdAt, q: h.lastSequence, v: h.activations, m: h.modelRequests, o: h.openCalls, p: h.openModelRequests, r: h.turnOpen, x: h.deleted };
    if (h.owner !== undefined) row.w = h.owner;
    return row;
  });
  const headsText = heads.length > 0 ? JSON.stringify(heads) : undefined;
  const statement = commitStatement(fence !== undefined, headsText !== undefined, fresh);
  const run = fence === undefined ? "" : (fence.run() ?? "");
  const params = 10 + (fence === undefined ? 0 : 3) + (headsText === undefined ? 0 : 1) + (fresh ? 1 : 0);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit (a surrogate pair's 4 bytes are 2 units).
  let payload = 5 * n.buffer.length + a.buffer.length + textArrayBytes(ids) + 3 * chars + textArrayBytes(types) + textArrayBytes(keys);
  if (fence !== undefined) payload += k!.buffer.length + 3 * (fence.nodeId.length + run.length) + (fresh ? f!.buffer.length : 0);
  if (headsText !== undefined) payload += 3 * headsText.length;
  const size = BindMessage.bytes(statement.name, params, payload);
  const bind = new BindMessage(buffer !== undefined && buffer.length >= size ? buffer : Buffer.allocUnsafe(size), statement.name, params);
  // Buffer parameters go out in binary format: the bytes as they are, no escaping either side.
  bind.binary(n.buffer);
  bind.textArray(ids);
  const data = bind.buffer;
  let end = bind.startData();
  const base = end - 1;
  for (let i = 0; i < count; i++) {
    const length = data.write(texts[i]!, end);
    o.set(i, end - base);
    l.set(i, length);
    end += length;
  }
  bind.endData(end);
  bind.binary(q.buffer);
  bind.binary(a.buffer);
  bind.binary(t.buffer);
  bind.binary(o.buffer);
  bind.binary(l.buffer);
  bind.textArray(types);
  bind.textArray(keys);
  if (fence !== undefined) {
    bind.binary(k!.buffer);
    bind.text(fence.nodeId);
    bind.text(run);
  }
  if (headsText !== undefined) bind.text(headsText);
  if (fresh) bind.binary(f!.buffer);
  return { message: bind.finish(), statement, buffer: bind.buffer };
}

/** The idempotency key a record is found by (journal.idempotency_key): message.user's, else none (NULL in the batch's keys). */
function keyOf(record: JournalRecord): string | undefined {
  return record.type === "message.user" ? record.data.idempotencyKey : undefined;
}

const STATE: Record<HeadStatus, number> = { idle: 0, running: 1, deleted: 2 };
const STATUSES: HeadStatus[] = ["idle", "running", "deleted"];

/**
 * A listing page: $1 the page size plus one, then the owner (a key's sessions), then the position
 * it starts after. Each state wanted is one range of an index in listing order, limited; their union
 * (merged in order, not sorted) is cut to the page, and only then are the page's session.created
 * rows read, by primary key.
 */
export function listingSql(byOwner: boolean, after: boolean, statuses: HeadStatus[]): string {
  const owner = byOwner ? "owner = $2 AND " : "";
  const from = after ? ` AND (created_at, session_id COLLATE "C") < ($${byOwner ? 3 : 2}::bigint, $${byOwner ? 4 : 3}::text)` : "";
  const order = (t = "") => `ORDER BY ${t}created_at DESC, ${t}session_id COLLATE "C" DESC`;
  const ranges = statuses.map((s) => `(SELECT session_id, created_at FROM session_listing WHERE ${owner}state = ${STATE[s]}${from} ${order()} LIMIT $1)`);
  // Scalar subqueries, so each listed session's head, session.created row and last sequence are
  // one primary-key lookup each, whatever the planner thinks of the tables' sizes (a join may hash a
  // whole table).
  return `SELECT (SELECT row_to_json(s) FROM sessions s WHERE s.session_id = p.session_id) AS head,
      (SELECT j.data FROM journal j WHERE j.session_id = p.session_id AND j.sequence = 1) AS created,
      (SELECT max(j.sequence) FROM journal j WHERE j.session_id = p.session_id) AS last
    FROM (SELECT * FROM (${ranges.join(" UNION ALL ")}) u ${order()} LIMIT $1) p ${order("p.")}`;
}

function headOf(row: HeadRow): SessionHead {
  return {
    sessionId: row.session_id,
    createdAt: Number(row.created_at),
    lastSequence: row.last_sequence,
    activations: row.activations,
    modelRequests: row.model_requests,
    openCalls: row.open_calls,
    openModelRequests: row.open_model_requests,
    turnOpen: row.turn_open,
    deleted: row.deleted,
    ...(row.owner === null ? {} : { owner: row.owner }),
  };
}
