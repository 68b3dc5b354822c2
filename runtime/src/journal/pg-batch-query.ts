/**
 * A PostgreSQL batch's statement as one message written straight into one buffer (journal/postgres.ts
 * commit): Bind, Execute and Sync of the extended query protocol, with Parse before them the first
 * time a connection runs the statement, handed to node-postgres as a Submittable (its `query`
 * accepts any object with `submit` and the handle* callbacks; it keeps the connection's queue and
 * routes the answer's messages here).
 *
 * node-postgres's own path for a prepared statement with a batch's parameters (~50 KB) ran, once a
 * batch, code too rarely called to be optimized (a Query, its Result, a promise; Bind built by a
 * Writer that starts at 256 bytes and grows by half with a copy each time, then allocates again;
 * four stream writes), and every Buffer parameter was copied once more into the Bind. Here the
 * records' data are encoded where they are sent, in a buffer each writer keeps (one batch in flight
 * on a writer at a time, and PostgreSQL answers only after reading all of it, so the next batch may
 * reuse it), and no Describe is sent: the statement's answer, the sessions refused, comes as data
 * rows of one text column, read as such.
 *
 * It reads two fields of node-postgres's Connection (the prepared statements it has parsed or sent),
 * which are not its documented API: runtime/package.json pins `pg` to the exact version this was
 * written and tested against (test/pg-batch-query.test.ts, on a real server), so an upgrade is a
 * change made and tested here, never one a user's install picks up.
 */
import { writeTextArray } from "./pg-binary-arrays.ts";

/** What this uses of node-postgres's Connection (the same bookkeeping its own Query keeps of prepared statements). */
interface Connection {
  stream: { writable: boolean; write(chunk: Buffer): boolean; cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
}

const EXECUTE_SYNC = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4]);

/**
 * A Bind message built in place: parameters in order, each binary (a Buffer, or bytes written at
 * `dataStart`..`dataEnd` by the caller) or text, then Execute and Sync. The buffer must hold
 * `BindMessage.bytes(...)` of what is written.
 */
export class BindMessage {
  private view: DataView;
  /** Where the next parameter goes. */
  at: number;
  private formats: number;
  private param = 0;
  private lengthAt = 0;

  /** Bytes a Bind (with Execute and Sync) of `statement` with `params` parameters of `payload` bytes in all takes at most. */
  static bytes(statement: string, params: number, payload: number): number {
    return 5 + 1 + 3 * statement.length + 1 + 2 + 2 * params + 2 + 4 * params + payload + 4 + EXECUTE_SYNC.length;
  }

  constructor(
    readonly buffer: Buffer,
    statement: string,
    private params: number,
  ) {
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
    buffer[0] = 0x42; // 'B'
    let at = 5;
    buffer[at++] = 0; // the unnamed portal
    at += buffer.write(statement, at);
    buffer[at++] = 0;
    this.view.setInt16(at, params);
    this.formats = at + 2;
    at = this.formats + 2 * params;
    this.view.setInt16(at, params);
    this.at = at + 2;
  }

  private next(binary: boolean): void {
    this.view.setInt16(this.formats + 2 * this.param++, binary ? 1 : 0);
  }

  binary(bytes: Buffer): void {
    this.next(true);
    this.view.setInt32(this.at, bytes.length);
    bytes.copy(this.buffer, this.at + 4);
    this.at += 4 + bytes.length;
  }

  text(value: string): void {
    this.next(false);
    const length = this.buffer.write(value, this.at + 4);
    this.view.setInt32(this.at, length);
    this.at += 4 + length;
  }

  /** A text[] in binary format (journal/pg-binary-arrays.ts), written in place. */
  textArray(values: ReadonlyArray<string | undefined>): void {
    this.next(true);
    const end = writeTextArray(this.buffer, this.view, this.at + 4, values);
    this.view.setInt32(this.at, end - this.at - 4);
    this.at = end;
  }

  /** A binary parameter the caller writes itself: its bytes start at the offset answered; `endData` closes it. */
  startData(): number {
    this.next(true);
    this.lengthAt = this.at;
    return this.at + 4;
  }

  endData(end: number): void {
    this.view.setInt32(this.lengthAt, end - this.lengthAt - 4);
    this.at = end;
  }

  /** The message (a view of the buffer): the result in text format, then Execute and Sync. */
  finish(): Buffer {
    if (this.param !== this.params) throw new Error(`Bind: ${this.param} parameters written, ${this.params} declared`);
    let at = this.at;
    this.view.setInt16(at, 1);
    this.view.setInt16(at + 2, 0);
    at += 4;
    this.view.setInt32(1, at - 1);
    EXECUTE_SYNC.copy(this.buffer, at);
    return this.buffer.subarray(0, at + EXECUTE_SYNC.length);
  }
}

/** A Parse message for a named statement, no parameter types given (the statement's casts name them). */
function parseMessage(name: string, text: string): Buffer {
  const size = 1 + 4 + Buffer.byteLength(name) + 1 + Buffer.byteLength(text) + 1 + 2;
  const b = Buffer.alloc(size);
  b[0] = 0x50; // 'P'
  b.writeInt32BE(size - 1, 1);
  let at = 5;
  at += b.write(name, at);
  b[at++] = 0;
  at += b.write(text, at);
  b[at++] = 0;
  b.writeInt16BE(0, at);
  return b;
}

/**
 * One batch statement on a writer's connection: `done` resolves with the first column of every row
 * answered (the sessions refused), or rejects with the server's error (a DatabaseError with its
 * SQLSTATE, as node-postgres's own queries reject) or the connection's.
 */
export class BatchQuery {
  readonly done: Promise<string[]>;
  private rows: string[] = [];
  private resolve!: (rows: string[]) => void;
  private reject!: (e: unknown) => void;
  private failed = false;

  constructor(
    /** The prepared statement's name and text (node-postgres records them when Parse completes). */
    readonly name: string,
    readonly text: string,
    readonly message: Buffer,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Called by node-postgres when the connection is free (its Connection, typed here by what is used). */
  submit(client: unknown): null {
    const connection = client as Connection;
    // As node-postgres's own writes: nothing goes to a stream that has ended (the client then fails every query it holds).
    if (!connection.stream.writable) return null;
    const parsed = connection.parsedStatements[this.name] !== undefined || connection.submittedNamedStatements[this.name] !== undefined;
    if (parsed) {
      connection.stream.write(this.message);
      return null;
    }
    // The statement's first run on this connection: Parse goes first, in the same write.
    connection.submittedNamedStatements[this.name] = this.text;
    connection.stream.cork?.();
    connection.stream.write(parseMessage(this.name, this.text));
    connection.stream.write(this.message);
    connection.stream.uncork?.();
    return null;
  }

  handleRowDescription(): void {}

  handleDataRow(msg: { fields: Array<string | null> }): void {
    const id = msg.fields[0];
    if (typeof id === "string") this.rows.push(id);
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {}

  handleCopyData(): void {}

  handleError(err: unknown): void {
    this.failed = true;
    this.reject(err);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.resolve(this.rows);
  }
}
