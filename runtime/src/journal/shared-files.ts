import { createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { once } from "node:events";
import type pg from "pg";
import { storeError } from "./pg-errors.ts";

/**
 * What several nodes keep in their one PostgreSQL besides the journal and the registry, so that a
 * feature works whichever node a request reaches (issue 28):
 * - uploads (components, packages) by kind and sha256 digest, in parts, so any node admits and
 *   runs what was uploaded through another;
 * - `/ui` logins, sealed, so a login made through one node is valid on every node.
 * One node (SQLite, memory) keeps both in its own folder and memory and needs none of this.
 */
export interface UploadShelf {
  /** Keeps the bytes of an admitted upload, read from `file`; nothing if they are kept already. Resolves once durable. */
  put(kind: string, digest: string, file: string): Promise<void>;
  /** Writes the bytes of an upload made through any node to `file`; false for one never kept. */
  get(kind: string, digest: string, file: string): Promise<boolean>;
}

/** A /ui login as every node reads it: the credential sealed (ui/login-seal.ts), by the hash of the cookie's id. */
export interface LoginRow {
  idHash: string;
  sealed: string;
  expiresAt: number;
}

export interface LoginShelf {
  saveLogin(row: LoginRow): Promise<void>;
  loadLogin(idHash: string): Promise<LoginRow | undefined>;
  deleteLogin(idHash: string): Promise<void>;
}

/** Bytes of one stored part: a part is read in one row, so a reader holds at most one part of a query at a time. */
export const UPLOAD_PART_BYTES = 1024 * 1024;

/** Schema (journal/postgres.ts MIGRATIONS): uploads in parts, and sealed /ui logins. */
export const SHARED_FILES_MIGRATION = `CREATE TABLE uploads (
     kind TEXT NOT NULL,
     digest TEXT NOT NULL,
     part INTEGER NOT NULL,
     parts INTEGER NOT NULL,
     bytes BYTEA NOT NULL,
     PRIMARY KEY (kind, digest, part)
   );
   CREATE TABLE ui_logins (
     id_hash TEXT PRIMARY KEY,
     sealed TEXT NOT NULL,
     expires_at BIGINT NOT NULL
   );`;

/** Uploads and logins in PostgreSQL, through the store's reader pool (each statement is one transaction). */
export class PgSharedFiles implements UploadShelf, LoginShelf {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Every part or none, in one transaction (a reader never finds some parts of an upload), read
   * from the file one part at a time: the node holds one part of it in memory, never the whole.
   */
  async put(kind: string, digest: string, file: string): Promise<void> {
    const f = await open(file, "r");
    let client: pg.PoolClient | undefined;
    let failed = false;
    try {
      const size = (await f.stat()).size;
      const parts = Math.max(1, Math.ceil(size / UPLOAD_PART_BYTES));
      client = await this.pool.connect();
      await client.query("BEGIN");
      const first = await client.query("SELECT 1 FROM uploads WHERE kind = $1 AND digest = $2 AND part = 0", [kind, digest]);
      if (first.rowCount === 0) {
        const part = Buffer.allocUnsafe(Math.min(UPLOAD_PART_BYTES, Math.max(size, 1)));
        for (let n = 0; n < parts; n++) {
          const { bytesRead } = await f.read(part, 0, Math.min(UPLOAD_PART_BYTES, size - n * UPLOAD_PART_BYTES), n * UPLOAD_PART_BYTES);
          await client.query("INSERT INTO uploads (kind, digest, part, parts, bytes) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", [kind, digest, n, parts, part.subarray(0, bytesRead)]);
        }
      }
      await client.query("COMMIT");
    } catch (e) {
      failed = true;
      throw storeError(e, false);
    } finally {
      // A connection whose transaction failed is closed, not returned (the pool opens another):
      // no ROLLBACK to wait for on a database that may be gone.
      client?.release(failed);
      await f.close();
    }
  }

  /** Part by part into the file (one part in memory at a time). */
  async get(kind: string, digest: string, file: string): Promise<boolean> {
    const { rows } = await this.query<{ parts: number }>("SELECT parts FROM uploads WHERE kind = $1 AND digest = $2 AND part = 0", [kind, digest]);
    if (rows[0] === undefined) return false;
    const out = createWriteStream(file);
    try {
      for (let part = 0; part < rows[0].parts; part++) {
        const r = await this.query<{ bytes: Buffer }>("SELECT bytes FROM uploads WHERE kind = $1 AND digest = $2 AND part = $3", [kind, digest, part]);
        if (r.rows[0] === undefined) return false;
        if (!out.write(r.rows[0].bytes)) await once(out, "drain");
      }
    } finally {
      out.end();
      await once(out, "close");
    }
    return true;
  }

  async saveLogin(row: LoginRow): Promise<void> {
    await this.query("INSERT INTO ui_logins (id_hash, sealed, expires_at) VALUES ($1, $2, $3) ON CONFLICT (id_hash) DO NOTHING", [row.idHash, row.sealed, row.expiresAt]);
    // Expired logins go with the next login made (the table holds about a day of logins; nothing else sweeps it).
    await this.query("DELETE FROM ui_logins WHERE expires_at < $1", [Date.now()]);
  }

  async loadLogin(idHash: string): Promise<LoginRow | undefined> {
    const { rows } = await this.query<{ sealed: string; expires_at: string }>("SELECT sealed, expires_at FROM ui_logins WHERE id_hash = $1", [idHash]);
    return rows[0] === undefined ? undefined : { idHash, sealed: rows[0].sealed, expiresAt: Number(rows[0].expires_at) };
  }

  async deleteLogin(idHash: string): Promise<void> {
    await this.query("DELETE FROM ui_logins WHERE id_hash = $1", [idHash]);
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw storeError(e, false);
    }
  }
}
