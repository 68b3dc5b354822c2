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
  /** Keeps the bytes of an admitted upload; nothing if they are kept already. Resolves once durable. */
  put(kind: string, digest: string, bytes: Uint8Array): Promise<void>;
  /** The bytes of an upload made through any node, or undefined for one never kept. */
  get(kind: string, digest: string): Promise<Uint8Array | undefined>;
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

  async put(kind: string, digest: string, bytes: Uint8Array): Promise<void> {
    const parts: Buffer[] = [];
    for (let at = 0; at < bytes.byteLength || parts.length === 0; at += UPLOAD_PART_BYTES) {
      parts.push(Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(UPLOAD_PART_BYTES, bytes.byteLength - at)));
    }
    // One statement: every part or none (a reader never finds some parts of an upload).
    await this.query(
      "INSERT INTO uploads (kind, digest, part, parts, bytes) SELECT $1, $2, n - 1, $3, b FROM unnest($4::bytea[]) WITH ORDINALITY AS t(b, n) ON CONFLICT DO NOTHING",
      [kind, digest, parts.length, parts],
    );
  }

  async get(kind: string, digest: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.query<{ parts: number }>("SELECT parts FROM uploads WHERE kind = $1 AND digest = $2 AND part = 0", [kind, digest]);
    if (rows[0] === undefined) return undefined;
    const chunks: Buffer[] = [];
    for (let part = 0; part < rows[0].parts; part++) {
      const r = await this.query<{ bytes: Buffer }>("SELECT bytes FROM uploads WHERE kind = $1 AND digest = $2 AND part = $3", [kind, digest, part]);
      if (r.rows[0] === undefined) return undefined;
      chunks.push(r.rows[0].bytes);
    }
    return Buffer.concat(chunks);
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
