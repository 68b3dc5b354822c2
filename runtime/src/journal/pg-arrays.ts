/**
 * PostgreSQL array literals for a batch's columns, built in one pass. The `pg` driver escapes every
 * element of an array parameter on its own (two regular expressions and a few string copies each),
 * which was the largest part of a node's CPU per journal record; a batch's JSON texts are escaped
 * here with one replace over all of them. Every element is quoted, so no text is read as NULL.
 */

/** A separator that JSON.stringify never emits raw (it escapes control characters) and ids never contain. */
const SEP = "\u0001";

export function textArray(values: readonly string[]): string {
  if (values.length === 0) return "{}";
  // A value holding the separator itself (not JSON text, not an id) takes the slow, exact path.
  if (hasSeparatorInside(values)) return `{${values.map(quote).join(",")}}`;
  return `{"${values.join(SEP).replace(/[\\"]/g, "\\$&").replaceAll(SEP, '","')}"}`;
}

/** Text elements where null stands for SQL NULL. */
export function nullableTextArray(values: ReadonlyArray<string | null>): string {
  return `{${values.map((v) => (v === null ? "NULL" : quote(v))).join(",")}}`;
}

export function numberArray(values: readonly number[]): string {
  for (const v of values) if (!Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
  return `{${values.join(",")}}`;
}

export function boolArray(values: readonly boolean[]): string {
  return `{${values.map((v) => (v ? "t" : "f")).join(",")}}`;
}

function quote(v: string): string {
  return `"${v.replace(/[\\"]/g, "\\$&")}"`;
}

function hasSeparatorInside(values: readonly string[]): boolean {
  for (const v of values) if (v.includes(SEP)) return true;
  return false;
}
