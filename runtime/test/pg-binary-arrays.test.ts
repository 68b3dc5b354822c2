// A PostgreSQL batch's columns in the binary array format (journal/pg-binary-arrays.ts): each kind
// of array, sent to a real server as node-postgres sends a Buffer parameter (binary format), reads
// back as the values written, at the edges of what a batch holds (negative tokens, millisecond
// timestamps, int4 limits, NULL keys, multi-byte and empty text).
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { Int4Column, Int8Column, textArray } from "../src/journal/pg-binary-arrays.ts";
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

test("an int4[] column reads back as written, int4's limits included", async () => {
  const values = [1, -1, 0, 2147483647, -2147483648, 96];
  const column = new Int4Column(values.length);
  values.forEach((v, i) => column.set(i, v));
  const { rows } = await db.query("SELECT array_to_json($1::int4[]) AS a", [column.buffer]);
  assert.equal(rows[0].a, values);
});

test("an int8[] column reads back as written: tokens (-1 for none), Date.now() timestamps, the safe-integer limits", async () => {
  const values = [-1, 1, 0, 1796644622840, 2 ** 32, 2 ** 32 - 1, -(2 ** 32), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  const column = new Int8Column(values.length);
  values.forEach((v, i) => column.set(i, v));
  // As text: a JSON number would lose int8 values beyond 2^53 (none here, but the check must not hide one).
  const { rows } = await db.query("SELECT array_agg(x::text ORDER BY i) AS a FROM unnest($1::int8[]) WITH ORDINALITY AS u(x, i)", [column.buffer]);
  assert.equal(rows[0].a, values.map(String));
});

test("a text[] reads back as written, NULLs (undefined) and multi-byte characters included", async () => {
  const values = ["ses_0001", undefined, "", "é ✓ 𝄞 \"quoted\" {braces}, commas", undefined, "tool.call_started"];
  const { rows } = await db.query("SELECT array_to_json($1::text[]) AS a, cardinality($1::text[]) AS n", [textArray(values)]);
  assert.is(rows[0].n, values.length);
  assert.equal(rows[0].a, values.map((v) => (v === undefined ? null : v)));
});

test("columns read together by unnest keep their rows in order", async () => {
  const n = new Int4Column(3);
  const a = new Int8Column(3);
  [5, 6, 7].forEach((v, i) => n.set(i, v));
  [1796644622840, -1, 42].forEach((v, i) => a.set(i, v));
  const { rows } = await db.query("SELECT u.n, u.a::text AS a, u.y, u.i::int AS i FROM unnest($1::int4[], $2::int8[], $3::text[]) WITH ORDINALITY AS u(n, a, y, i) ORDER BY u.i", [n.buffer, a.buffer, textArray(["k", undefined, "ü"])]);
  assert.equal(rows, [
    { n: 5, a: "1796644622840", y: "k", i: 1 },
    { n: 6, a: "-1", y: null, i: 2 },
    { n: 7, a: "42", y: "ü", i: 3 },
  ]);
});

test.run();
