/**
 * A time as ISO 8601 text (what Date#toISOString gives), for span attributes such as a call's
 * deadline. The text up to the second is kept from the last call: times written one after another
 * mostly fall in the same second, and a Date plus toISOString per span was ~0.6 µs of a traced
 * call's cost (bench §15).
 */
let second = Number.NaN;
let prefix = "";

export function isoTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const rest = ms - s * 1000;
  // A fraction of a millisecond, or a year outside 0–9999 (a 6-digit ISO year): Date says it.
  if (!Number.isInteger(rest) || ms < 0 || ms >= 253402300800000) return new Date(ms).toISOString();
  if (s !== second) {
    second = s;
    prefix = new Date(s * 1000).toISOString().slice(0, 20);
  }
  return `${prefix}${rest < 10 ? "00" : rest < 100 ? "0" : ""}${rest}Z`;
}
