import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";

/** One journal row as the SQLite journal stores it (`journal` table), `data` as its JSON text. */
export interface LoggedRow {
  id: number;
  sessionId: string;
  sequence: number;
  at: number;
  type: string;
  prev: number | null;
  data: string;
}

/**
 * The SQLite journal's log: each group commit appended to a plain file as one line, with one
 * `write`, before the commit is acknowledged. The rows reach SQLite's tables a few milliseconds
 * later, many commits in one transaction (sqlite.ts), so no SQLite commit is on a call's path.
 *
 * A line is the batch as a JSON array of rows, `[id, sessionId, sequence, at, type, prev, data]`,
 * `data` being the record's JSON text as is. Durability matches SQLite's WAL with
 * synchronous=NORMAL: once `write` returns, the line survives the process being killed (it is in
 * the kernel's page cache); an OS crash may lose the last lines. With `sync` each line is also
 * flushed to the disk (`fdatasync`) before the commit returns, as synchronous=FULL would.
 *
 * Reading it back (`readLog`) keeps the lines up to the first one that is incomplete or is not a
 * batch continuing the previous one's ids: a process killed inside a `write` leaves at most a torn
 * last line, never acknowledged.
 */
export class SqliteLog {
  private fd: number;
  private size: number;
  /** Set when a torn line could not be removed: appending after it would be lost on reading. */
  private broken: Error | undefined;

  constructor(
    readonly path: string,
    private readonly sync: boolean,
  ) {
    this.fd = openSync(path, "a");
    this.size = fstatSync(this.fd).size;
  }

  /** The bytes appended since the log was last emptied. */
  get bytes(): number {
    return this.size;
  }

  /** Appends one batch as one line (one `write` call: a partial write is retried until done). */
  append(rows: readonly LoggedRow[]): void {
    if (this.broken !== undefined) throw this.broken;
    let line = "[";
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      line += `${i === 0 ? "" : ","}[${r.id},${JSON.stringify(r.sessionId)},${r.sequence},${r.at},${JSON.stringify(r.type)},${r.prev},${r.data}]`;
    }
    line += "]\n";
    const bytes = Buffer.from(line);
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off);
      if (this.sync) fdatasyncSync(this.fd);
    } catch (e) {
      // A part of the line may be in the file (a full disk): cut it off, or a later line would
      // follow a torn one and be lost to `readLog`. If even that fails, no line may follow.
      try {
        ftruncateSync(this.fd, this.size);
      } catch (cut) {
        this.broken = new Error(`journal log ${this.path}: a failed append could not be cut off`, { cause: cut });
      }
      throw e;
    }
    this.size += bytes.length;
  }

  /** Empties the log: only once every line in it is in SQLite and SQLite's commit of them is on disk. */
  reset(): void {
    ftruncateSync(this.fd, 0);
    this.size = 0;
  }

  close(remove: boolean): void {
    closeSync(this.fd);
    if (remove) rmSync(this.path, { force: true });
  }
}

/** The rows of a log file after row id `after`, in order; stops at the first line that is torn or out of step. */
export function readLog(path: string, after: number): LoggedRow[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const rows: LoggedRow[] = [];
  let next: number | undefined;
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf("\n", start);
    if (end < 0) break; // a torn last line: never acknowledged
    const batch = parseBatch(text.slice(start, end));
    if (batch === undefined || batch.length === 0) break;
    if (next !== undefined && batch[0]!.id !== next) break;
    for (const r of batch) {
      if (next !== undefined && r.id !== next) return rows;
      next = r.id + 1;
      if (r.id > after) rows.push(r);
    }
    start = end + 1;
  }
  return rows;
}

function parseBatch(line: string): LoggedRow[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const rows: LoggedRow[] = [];
  for (const r of parsed) {
    if (!Array.isArray(r) || r.length !== 7) return undefined;
    const [id, sessionId, sequence, at, type, prev, data] = r as unknown[];
    if (!Number.isSafeInteger(id) || typeof sessionId !== "string" || !Number.isSafeInteger(sequence) || typeof at !== "number" || typeof type !== "string") return undefined;
    if (prev !== null && !Number.isSafeInteger(prev)) return undefined;
    rows.push({ id: id as number, sessionId, sequence: sequence as number, at, type, prev: prev as number | null, data: JSON.stringify(data) });
  }
  return rows;
}
