// A PostgreSQL batch's statement sent as one message written in place (journal/pg-batch-query.ts),
// on a real server through node-postgres's Client: every kind of parameter reads back as written,
// the statement is parsed once per connection and reused after, the rows answered come back, a
// buffer reused for the next message leaves nothing of the last one, and a server error rejects
// with its SQLSTATE while the connection goes on serving queries.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { BatchQuery, BindMessage } from "../src/journal/pg-batch-query.ts";
import { Int4Column, textArrayBytes } from "../src/journal/pg-binary-arrays.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";

let cluster: PgCluster;
let db: pg.Client;

test.before(async () => {
  cluster = await startPgCluster();
  db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
});

test.after(async () => {
  await db.end();
  await cluster.stop();
});

const ECHO = {
  name: "test_batch_echo",
  text: `SELECT x::text FROM unnest($1::int4[]) AS u(x)
    UNION ALL SELECT t FROM unnest($2::text[]) AS v(t) WHERE t IS NOT NULL
    UNION ALL SELECT convert_from($3::bytea, 'UTF8')
    UNION ALL SELECT $4::text`,
};

/** ECHO's message: ints, a text[] (undefined: NULL), bytes written in place as $3, a text $4. */
function echo(buffer: Buffer | undefined, ints: number[], texts: Array<string | undefined>, data: string, last: string): Buffer {
  const column = new Int4Column(ints.length);
  ints.forEach((v, i) => column.set(i, v));
  const size = BindMessage.bytes(ECHO.name, 4, column.buffer.length + textArrayBytes(texts) + 3 * data.length + 3 * last.length);
  const bind = new BindMessage(buffer !== undefined && buffer.length >= size ? buffer : Buffer.allocUnsafe(size), ECHO.name, 4);
  bind.binary(column.buffer);
  bind.textArray(texts);
  const start = bind.startData();
  bind.endData(start + bind.buffer.write(data, start));
  bind.text(last);
  return bind.finish();
}

test("a statement's parameters written in place read back as written; Parse only on its first run on a connection", async () => {
  const first = echo(undefined, [7, -1, 2147483647], ["a", undefined, "é ✓ 𝄞"], "data ü \"q\"", "tail");
  const rows = await db.query(new BatchQuery(ECHO.name, ECHO.text, first)).done;
  assert.equal(rows, ["7", "-1", "2147483647", "a", "é ✓ 𝄞", "data ü \"q\"", "tail"]);
  const { rows: prepared } = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_prepared_statements WHERE name = $1", [ECHO.name]);
  assert.is(prepared[0]!.n, "1");
  // The same statement again on the connection: Bind only (a second Parse of the name would fail: 42P05).
  const again = await db.query(new BatchQuery(ECHO.name, ECHO.text, echo(undefined, [1], [], "", "x"))).done;
  assert.equal(again, ["1", "", "x"]);
});

test("a buffer reused for a shorter message sends only the new one", async () => {
  const buffer = Buffer.allocUnsafe(4096);
  const long = echo(buffer, [1, 2, 3, 4, 5, 6], ["one", "two", "three"], "x".repeat(500), "long");
  assert.is(long.buffer, buffer.buffer, "written into the buffer given");
  assert.equal(await db.query(new BatchQuery(ECHO.name, ECHO.text, long)).done, ["1", "2", "3", "4", "5", "6", "one", "two", "three", "x".repeat(500), "long"]);
  const short = echo(buffer, [9], ["nine"], "d", "short");
  assert.equal(await db.query(new BatchQuery(ECHO.name, ECHO.text, short)).done, ["9", "nine", "d", "short"]);
});

test("a server error rejects with its SQLSTATE, and the connection serves the next statement", async () => {
  const failing = { name: "test_batch_fail", text: "SELECT (1 / ($1::int4[])[1])::text" };
  const column = new Int4Column(1);
  column.set(0, 0);
  const bind = new BindMessage(Buffer.allocUnsafe(BindMessage.bytes(failing.name, 1, column.buffer.length)), failing.name, 1);
  bind.binary(column.buffer);
  const error = await db.query(new BatchQuery(failing.name, failing.text, bind.finish())).done.then(
    () => undefined,
    (e: unknown) => e as { code?: string },
  );
  assert.is(error?.code, "22012", "division_by_zero");
  const { rows } = await db.query<{ one: number }>("SELECT 1 AS one");
  assert.equal(rows, [{ one: 1 }]);
  assert.equal(await db.query(new BatchQuery(ECHO.name, ECHO.text, echo(undefined, [3], [], "", "ok"))).done, ["3", "", "ok"]);
});

test("a connection that is gone rejects the statement instead of leaving it waiting", async () => {
  const other = new pg.Client({ connectionString: cluster.url });
  other.on("error", () => {});
  await other.connect();
  await db.query("SELECT pg_terminate_backend($1)", [(other as unknown as { processID: number }).processID]);
  const outcome = await other.query(new BatchQuery(ECHO.name, ECHO.text, echo(undefined, [1], [], "", "x"))).done.then(
    () => "resolved",
    () => "rejected",
  );
  assert.is(outcome, "rejected");
  await other.end().catch(() => {});
});

test.run();
