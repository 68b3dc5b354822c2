/**
 * One-dimensional PostgreSQL arrays in the binary wire format (what array_recv reads), for the
 * parameters of a PostgreSQL batch (journal/postgres.ts batchMessage, its Bind written in place by
 * journal/pg-batch-query.ts, as node-postgres sends a Buffer parameter: in binary format, as it
 * is). So a column of a batch's records travels without a text
 * form at all: no JSON or array literal to build on the node, none to parse on the server
 * (json_to_recordset's parse and per-field lookups cost the server ~0.7 µs a record more than
 * unnest over binary arrays, measured with 96-record statements).
 *
 * Layout: ndim (1), has-nulls flag, element type OID, length, lower bound (1), then each element as
 * its byte length (-1: NULL) and its bytes, integers big-endian.
 */

const INT4_OID = 23;
const INT8_OID = 20;
const TEXT_OID = 25;
const HEADER = 20;
const TWO_32 = 2 ** 32;

function header(view: DataView, oid: number, count: number, hasNulls: boolean): void {
  view.setInt32(0, 1);
  view.setInt32(4, hasNulls ? 1 : 0);
  view.setInt32(8, oid);
  view.setInt32(12, count);
  view.setInt32(16, 1);
}

function viewOf(buffer: Buffer): DataView {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
}

/**
 * An int4[] of `count` elements, set one by one (every element must be set before it is sent).
 * Written through a DataView: Buffer's writeInt32BE checks its arguments at every call, which made
 * building a batch's columns slower than the JSON text they replace.
 */
export class Int4Column {
  readonly buffer: Buffer;
  private view: DataView;
  constructor(count: number) {
    this.buffer = Buffer.allocUnsafe(HEADER + 8 * count);
    this.view = viewOf(this.buffer);
    header(this.view, INT4_OID, count, false);
  }
  set(i: number, value: number): void {
    const at = HEADER + 8 * i;
    this.view.setInt32(at, 4);
    this.view.setInt32(at + 4, value);
  }
}

/** An int8[] of `count` elements: integers of JavaScript's safe range (timestamps in ms, tokens, -1). */
export class Int8Column {
  readonly buffer: Buffer;
  private view: DataView;
  constructor(count: number) {
    this.buffer = Buffer.allocUnsafe(HEADER + 12 * count);
    this.view = viewOf(this.buffer);
    header(this.view, INT8_OID, count, false);
  }
  set(i: number, value: number): void {
    const at = HEADER + 12 * i;
    const high = Math.floor(value / TWO_32);
    this.view.setInt32(at, 8);
    this.view.setInt32(at + 4, high);
    this.view.setUint32(at + 8, value - high * TWO_32);
  }
}

/** Bytes a text[] of `values` takes at most (UTF-8 takes at most 3 bytes per UTF-16 code unit: a surrogate pair's 4 bytes are 2 units). */
export function textArrayBytes(values: ReadonlyArray<string | undefined>): number {
  let size = HEADER;
  for (const v of values) size += 4 + (v === undefined ? 0 : 3 * v.length);
  return size;
}

/** A text[] of `values` (undefined: NULL), each as UTF-8. */
export function textArray(values: ReadonlyArray<string | undefined>): Buffer {
  const buffer = Buffer.allocUnsafe(textArrayBytes(values));
  return buffer.subarray(0, writeTextArray(buffer, viewOf(buffer), 0, values));
}

/**
 * Writes a text[] of `values` into `buffer` (`view` over the same bytes) at `start`, which must
 * have textArrayBytes(values) bytes; answers where it ends.
 */
export function writeTextArray(buffer: Buffer, view: DataView, start: number, values: ReadonlyArray<string | undefined>): number {
  let hasNulls = false;
  for (const v of values) if (v === undefined) hasNulls = true;
  view.setInt32(start, 1);
  view.setInt32(start + 4, hasNulls ? 1 : 0);
  view.setInt32(start + 8, TEXT_OID);
  view.setInt32(start + 12, values.length);
  view.setInt32(start + 16, 1);
  let at = start + HEADER;
  for (const v of values) {
    if (v === undefined) {
      view.setInt32(at, -1);
      at += 4;
      continue;
    }
    const length = buffer.write(v, at + 4);
    view.setInt32(at, length);
    at += 4 + length;
  }
  return at;
}
