// Opens the database chosen by configuration (SQLite by default, PostgreSQL when DATABASE_URL is set)
// and brings its schema up to date. Everything above this file speaks Kysely only.
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  Kysely,
  sql,
  type Transaction,
  Migrator,
  PostgresDialect,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import type { DB, Db } from './schema.ts';
import { groupedPerDocument, groupedWrites, type DocumentWrites } from './writes.ts';
import { postgresSaves, sqliteSaves, type SaveStore } from './saves.ts';
import { SqliteDialectWithReader } from './sqlite-driver.ts';
import { postgresPool, type StatementCounts } from './postgres-pool.ts';
import { limits } from '../limits.ts';
import { assertDatabaseReachable } from './reach.ts';
import type { ColumnTypes } from './column-types.ts';
import { up001 } from './migrations/001_initial.ts';
import { up002 } from './migrations/002_stylesheets.ts';
import { up003 } from './migrations/003_index_names.ts';
import { up004Billing } from './migrations/004_billing.ts';
import { up005HostSessions } from './migrations/005_host_sessions.ts';
import { up006TeamInvites } from './migrations/006_team_invites.ts';
import { up007Trash } from './migrations/007_trash.ts';
import { up008Redirects } from './migrations/008_redirects.ts';
import { up009Accounts } from './migrations/009_accounts.ts';
import { up010Admin } from './migrations/010_admin.ts';
import { up011Activity } from './migrations/011_activity.ts';
import { up012MovedUsernames } from './migrations/012_moved_usernames.ts';
import { up013Messages } from './migrations/013_messages.ts';
import { up014Collections } from './migrations/014_collections.ts';
import { up015PrivateRecords } from './migrations/015_private_records.ts';
import { up016UsernameHolders } from './migrations/016_username_holders.ts';
import { up017DataLoss } from './migrations/017_data_loss.ts';
import { up018NameScope } from './migrations/018_name_scope.ts';
import { up019ActivityDetail } from './migrations/019_activity_detail.ts';
import { up020ContentCompression } from './migrations/020_content_compression.ts';
import { up021ContentSplice } from './migrations/021_content_splice.ts';
import { up022CollectionHeld } from './migrations/022_collection_held.ts';
import { up023AiEditUsage } from './migrations/023_ai_edit_usage.ts';
import { up024ForbidFraming } from './migrations/024_forbid_framing.ts';
import { up025GuardChecks } from './migrations/025_guard_checks.ts';
import { up026NotFoundPages } from './migrations/026_not_found_pages.ts';
import { up027AgentKeys } from './migrations/027_agent_keys.ts';
import { up028OAuth } from './migrations/028_oauth.ts';
import { up029AgentClients } from './migrations/029_agent_clients.ts';
import { up030ContentSplices } from './migrations/030_content_splices.ts';

function migrations(t: ColumnTypes): Record<string, Migration> {
  return {
    '001_initial': { up: up001(t) },
    '002_stylesheets': { up: up002(t) },
    '003_index_names': { up: up003(t) },
    '004_billing': { up: up004Billing(t) },
    '005_host_sessions': { up: up005HostSessions(t) },
    '006_team_invites': { up: up006TeamInvites(t) },
    '007_trash': { up: up007Trash(t) },
    '008_redirects': { up: up008Redirects(t) },
    '009_accounts': { up: up009Accounts(t) },
    '010_admin': { up: up010Admin(t) },
    '011_activity': { up: up011Activity(t) },
    '012_moved_usernames': { up: up012MovedUsernames(t) },
    '013_messages': { up: up013Messages(t) },
    '014_collections': { up: up014Collections(t) },
    '015_private_records': { up: up015PrivateRecords(t) },
    '016_username_holders': { up: up016UsernameHolders(t) },
    '017_data_loss': { up: up017DataLoss(t) },
    '018_name_scope': { up: up018NameScope(t) },
    '019_activity_detail': { up: up019ActivityDetail(t) },
    '020_content_compression': { up: up020ContentCompression(t) },
    '021_content_splice': { up: up021ContentSplice(t) },
    '022_collection_held': { up: up022CollectionHeld(t) },
    '023_ai_edit_usage': { up: up023AiEditUsage(t) },
    '024_forbid_framing': { up: up024ForbidFraming(t) },
    '025_guard_checks': { up: up025GuardChecks(t) },
    '026_not_found_pages': { up: up026NotFoundPages(t) },
    '027_agent_keys': { up: up027AgentKeys(t) },
    '028_oauth': { up: up028OAuth(t) },
    '029_agent_clients': { up: up029AgentClients(t) },
    '030_content_splices': { up: up030ContentSplices(t) },
  };
}

export interface Database {
  db: Db;
  dialect: 'sqlite' | 'postgres';
  /** Write locks held until the transaction ends, chosen with the database. */
  lock: Locks;
  /** How a document's writes are committed, chosen with the database (src/store/writes.ts); reached through
   *  inTransaction's `document` (src/store/transaction.ts). */
  writes: DocumentWrites;
  /** The rows a document save reads and writes (src/store/saves.ts). */
  saves: SaveStore;
  /** A consistent copy of the whole database while it serves: SQLite's online backup API into a
   *  database file, or `pg_dump` in its custom format (src/backup/). */
  snapshot(file: string): Promise<void>;
  /** PostgreSQL statements sent so far (SQLite: none, its statements are function calls). */
  statements: StatementCounts;
  /** A number that changes when another process (connection) commits to the database: SQLite's `data_version`
   *  (one function call, ~4 µs). PostgreSQL: 0 (its processes share a bus; nothing asks it there). */
  dataVersion: () => number;
  close(): Promise<void>;
}

/** Makes concurrent writers of the same rows queue inside their transactions. PostgreSQL takes row or
 *  table locks; SQLite needs none (Kysely runs its transactions one at a time on one connection). */
export interface Locks {
  row(trx: Transaction<DB>, table: 'nodes' | 'accounts', id: number): Promise<void>;
  /** Blocks concurrent writes to the table until the transaction ends (first-run setup; switching how
   *  document names are unique). */
  table(trx: Transaction<DB>, table: 'accounts' | 'nodes'): Promise<void>;
}

const postgresLocks: Locks = {
  row: async (trx, table, id) => {
    await trx.selectFrom(table).select('id').where('id', '=', id).forUpdate().execute();
  },
  table: async (trx, table) => {
    await sql`LOCK TABLE ${sql.table(table)} IN SHARE ROW EXCLUSIVE MODE`.execute(trx);
  },
};
const sqliteLocks: Locks = { row: async () => {}, table: async () => {} };

export async function openDatabase(opts: { databaseUrl?: string; dataDir: string }): Promise<Database> {
  let db: Db;
  let dialect: Database['dialect'];
  let types: ColumnTypes;
  let snapshot: Database['snapshot'];
  let dataVersion: Database['dataVersion'] = () => 0;
  const statements: StatementCounts = { awaited: 0, pipelined: 0 };
  if (opts.databaseUrl) {
    // A database that does not exist (or cannot be reached) is said in one line naming DATABASE_URL.
    await assertDatabaseReachable(opts.databaseUrl);
    const pg = (await import('pg')).default;
    // COUNT(*) and other int8 results come back as numbers, like SQLite's.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      // A database that does not answer (a network blackhole) fails requests quickly instead of hanging them.
      connectionTimeoutMillis: limits.database.connectMs,
      query_timeout: limits.database.queryMs,
      statement_timeout: limits.database.queryMs,
      // Statements are written without waiting for the one before (src/store/postgres-pool.ts).
      pipeline: true,
    });
    const ending = () => (pool as unknown as { ending?: boolean }).ending;
    // An idle connection the server ends (a restart; or, after close, a dropped database) is an
    // 'error' on the pool, which removes that connection itself: without a listener it would crash
    // the process.
    pool.on('error', (err) => {
      if (!ending()) console.error('PostgreSQL idle connection error:', err.message);
    });
    // A connection lost while checked out (in a query or a transaction) emits 'error' on its client,
    // which the pool's listener does not cover: without this the process would end. The query in
    // flight fails on its own (and its request answers 503); the pool drops the broken client.
    pool.on('connect', (client) => {
      client.on('error', (err) => {
        if (!ending()) console.error('PostgreSQL connection lost:', err.message);
      });
    });
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: postgresPool(pool, statements) }) });
    dialect = 'postgres';
    const url = opts.databaseUrl;
    snapshot = (file) =>
      run('pg_dump', [
        '--format=custom',
        '--no-owner',
        // Blobs kept in PostgreSQL (BLOB_STORE=postgres) go into the backup's blobs/ folder instead.
        '--exclude-table-data=kiln_blobs',
        '--exclude-table-data=kiln_blob_chunks',
        `--file=${file}`,
        `--dbname=${url}`,
      ]);
    types = { idType: 'serial', idColumn: (c) => c.primaryKey(), bytes: 'bytea' };
  } else {
    const SQLite = (await import('better-sqlite3')).default;
    fs.mkdirSync(opts.dataDir, { recursive: true });
    const file = new SQLite(path.join(opts.dataDir, 'kiln.sqlite'));
    // WAL + synchronous=FULL: a commit is on disk before the answer goes out, and survives SIGKILL.
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = FULL');
    file.pragma('foreign_keys = ON');
    file.pragma('busy_timeout = 5000');
    // better-sqlite3's default, named where the other memory bounds are (a negative size is in KiB).
    const pageCache = `cache_size = -${limits.memory.sqlitePageCache / 1024}`;
    file.pragma(pageCache);
    // The reader (src/store/sqlite-driver.ts): SELECTs only, never blocked by the writer's transaction.
    const reader = new SQLite(path.join(opts.dataDir, 'kiln.sqlite'));
    reader.pragma('busy_timeout = 5000');
    reader.pragma('query_only = ON');
    reader.pragma(pageCache);
    db = new Kysely<DB>({ dialect: new SqliteDialectWithReader(file, reader) });
    dialect = 'sqlite';
    // Asked of the writer: its own commits leave the number alone, another connection's (process's) change it.
    const version = file.prepare('PRAGMA data_version').pluck();
    dataVersion = () => version.get() as number;
    snapshot = async (to) => {
      await file.backup(to);
    };
    types = { idType: 'integer', idColumn: (c) => c.primaryKey().autoIncrement(), bytes: 'blob' };
  }
  const provider: MigrationProvider = { getMigrations: async () => migrations(types) };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`Database migration ${failed ?? ''} failed: ${(error as Error).message ?? error}`);
  }
  return {
    db,
    dialect,
    lock: dialect === 'postgres' ? postgresLocks : sqliteLocks,
    writes: dialect === 'postgres' ? groupedPerDocument(db) : groupedWrites(db),
    saves: dialect === 'postgres' ? postgresSaves : sqliteSaves,
    snapshot,
    statements,
    dataVersion,
    close: () => db.destroy(),
  };
}

/** Runs the cheapest query there is: rejects when the database does not answer (readiness checks). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Runs a program to its end; rejects with its error output when it fails. */
export function run(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} failed (${code}): ${err.trim()}`)),
    );
  });
}
