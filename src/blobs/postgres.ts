// Blobs in PostgreSQL (BLOB_STORE=postgres): each blob is rows of 256 KiB chunks in their own table,
// written in one transaction with the blob's row, so a crash leaves the whole blob or none of it; read
// one chunk at a time, so a large file is never whole in memory. Chunks are content-addressed like the
// blob (a blob's chunk n is always the same bytes), so two writers of one blob never disagree.
import { Readable } from 'node:stream';
import type pg from 'pg';
import { sha256 } from '../core/checksum.ts';
import { BLOB_NAME, type BlobListing, type BlobStore, type ByteRange } from './store.ts';

export const CHUNK_BYTES = 256 * 1024;

const SCHEMA = `
create table if not exists kiln_blobs (
  name text primary key,
  size bigint not null,
  stored_at timestamptz not null default now()
);
create table if not exists kiln_blob_chunks (
  name text not null,
  n integer not null,
  data bytea not null,
  primary key (name, n)
);`;

export class PostgresBlobStore implements BlobStore {
  readonly kind = 'postgres' as const;
  private made: Promise<unknown> | null = null;

  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  constructor(pool: pg.Pool, ownsPool = true) {
    this.pool = pool;
    this.ownsPool = ownsPool;
    // An idle connection that breaks (the database restarts) is an event, never a crash.
    pool.on('error', (err) => console.error('blob store connection error:', err.message));
  }

  /** The tables, made on first use; a failure (the database away) is retried on the next call. Two
   *  processes starting at once may both create them: the loser's error is harmless, so it tries once more. */
  private get ready(): Promise<unknown> {
    this.made ??= this.pool
      .query(SCHEMA)
      .catch(() => this.pool.query(SCHEMA))
      .catch((err) => {
        this.made = null;
        throw err;
      });
    return this.made;
  }

  static async open(url: string): Promise<PostgresBlobStore> {
    // Imported here, not at start: an instance on SQLite never loads the PostgreSQL driver.
    const pg = (await import('pg')).default;
    return new PostgresBlobStore(new pg.Pool({ connectionString: url, max: 5 }));
  }

  private check(name: string) {
    if (!BLOB_NAME.test(name)) throw new Error('bad blob name');
  }

  async put(bytes: Buffer): Promise<string> {
    await this.ready;
    const name = sha256(bytes);
    const renewed = await this.pool.query('update kiln_blobs set stored_at = now() where name = $1', [name]);
    if (renewed.rowCount) return name;
    await this.transaction(async (client) => {
      for (let n = 0, at = 0; at < bytes.length || n === 0; n++, at += CHUNK_BYTES) {
        await client.query('insert into kiln_blob_chunks (name, n, data) values ($1, $2, $3) on conflict do nothing', [
          name,
          n,
          bytes.subarray(at, at + CHUNK_BYTES),
        ]);
      }
      await client.query(
        'insert into kiln_blobs (name, size) values ($1, $2) on conflict (name) do update set stored_at = now()',
        [name, bytes.length],
      );
    });
    return name;
  }

  private async size(name: string): Promise<number | null> {
    this.check(name);
    await this.ready;
    const r = await this.pool.query<{ size: string }>('select size from kiln_blobs where name = $1', [name]);
    return r.rows[0] ? Number(r.rows[0].size) : null;
  }

  async get(name: string): Promise<Buffer | null> {
    const size = await this.size(name);
    if (size === null) return null;
    const r = await this.pool.query<{ data: Buffer }>('select data from kiln_blob_chunks where name = $1 order by n', [
      name,
    ]);
    return Buffer.concat(r.rows.map((row) => row.data));
  }

  async stream(name: string, range?: ByteRange): Promise<Readable | null> {
    const size = await this.size(name);
    if (size === null) return null;
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const pool = this.pool;
    async function* chunks() {
      for (let n = Math.floor(start / CHUNK_BYTES); n * CHUNK_BYTES <= end; n++) {
        const r = await pool.query<{ data: Buffer }>('select data from kiln_blob_chunks where name = $1 and n = $2', [
          name,
          n,
        ]);
        const data = r.rows[0]?.data;
        if (!data) throw new Error(`blob ${name} is missing chunk ${n}`);
        const from = Math.max(0, start - n * CHUNK_BYTES);
        const to = Math.min(data.length, end - n * CHUNK_BYTES + 1);
        yield data.subarray(from, to);
      }
    }
    return Readable.from(size === 0 ? [] : chunks(), { objectMode: false });
  }

  async has(name: string): Promise<boolean> {
    return (await this.size(name)) !== null;
  }

  async storedAt(name: string): Promise<Date | null> {
    this.check(name);
    await this.ready;
    const r = await this.pool.query<{ stored_at: Date }>('select stored_at from kiln_blobs where name = $1', [name]);
    return r.rows[0]?.stored_at ?? null;
  }

  async delete(name: string): Promise<void> {
    this.check(name);
    await this.ready;
    await this.transaction(async (client) => {
      await client.query('delete from kiln_blobs where name = $1', [name]);
      await client.query('delete from kiln_blob_chunks where name = $1', [name]);
    });
  }

  /** Runs `fn` in a transaction on one pooled connection: all of it, or none. */
  private async transaction(fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      await fn(client);
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async *list(): AsyncIterable<BlobListing> {
    await this.ready;
    let after = '';
    for (;;) {
      const r = await this.pool.query<{ name: string; stored_at: Date }>(
        'select name, stored_at from kiln_blobs where name > $1 order by name limit 1000',
        [after],
      );
      for (const row of r.rows) yield { name: row.name, storedAt: row.stored_at };
      if (r.rows.length < 1000) return;
      after = r.rows[r.rows.length - 1].name;
    }
  }

  async reachable(): Promise<boolean> {
    try {
      await this.ready;
      await this.pool.query('select 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
