// Backups while serving, and restoring one into an empty instance.
//
// A backup is a folder `kiln-backup-<time>/` holding `database.sqlite` (SQLite's online backup API)
// or `database.pgdump` (`pg_dump`, custom format), `blobs/ab/cd/<sha256>` (every blob a file of that
// snapshot names, in the filesystem store's layout) and `manifest.json`. It is written as
// `<name>.partial` and renamed when whole, so a folder without `.partial` is a complete backup. The
// blob names are read before and after the snapshot and joined: a blob is immutable, and whatever the
// snapshot names was named at one of those moments. A destination `s3://bucket/prefix` is written
// through the S3 variables (S3_ENDPOINT, S3_ACCESS_KEY_ID …), the bucket and prefix from the URL.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { BlobStore } from '../blobs/store.ts';
import { BLOB_NAME } from '../blobs/store.ts';
import { blobsNamed } from '../store/nodes.ts';
import { run } from '../store/db.ts';
import { sha256 } from '../core/checksum.ts';
import { S3Folder, isS3Url } from './s3-folder.ts';

const PREFIX = 'kiln-backup-';

export interface Manifest {
  format: 1;
  createdAt: string;
  database: 'sqlite' | 'postgres';
  blobs: number;
  /** Bytes of the whole backup. */
  bytes: number;
}

const blobFile = (root: string, name: string) => path.join(root, 'blobs', name.slice(0, 2), name.slice(2, 4), name);

/** Takes a backup into `dest` (a folder, or s3://bucket/prefix); answers where it is and its manifest. */
export async function takeBackup(s: Services, dest: string): Promise<{ location: string; manifest: Manifest }> {
  const name = `${PREFIX}${s.clock.now().toISOString().replace(/[:.]/g, '-')}`;
  if (isS3Url(dest)) {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'kiln-backup-'));
    try {
      const { manifest } = await backupInto(s, tmp, name);
      const folder = S3Folder.fromUrl(dest);
      await folder.upload(path.join(tmp, name), name);
      return { location: `${dest.replace(/\/+$/, '')}/${name}`, manifest };
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  await fsp.mkdir(dest, { recursive: true });
  return backupInto(s, dest, name);
}

async function backupInto(s: Services, dest: string, name: string) {
  const partial = path.join(dest, `${name}.partial`);
  await fsp.mkdir(partial, { recursive: true });
  try {
    const before = await blobsNamed(s.database.db);
    const dbFile = path.join(partial, s.database.dialect === 'sqlite' ? 'database.sqlite' : 'database.pgdump');
    await s.database.snapshot(dbFile);
    const names = new Set([...before, ...(await blobsNamed(s.database.db))]);
    let blobs = 0;
    for (const blob of names) {
      const from = await s.blobs.stream(blob);
      if (!from) {
        console.warn(`backup: blob ${blob} is named by a file but missing from the store`);
        continue;
      }
      const to = blobFile(partial, blob);
      await fsp.mkdir(path.dirname(to), { recursive: true });
      await pipeline(from, fs.createWriteStream(to));
      blobs++;
    }
    const manifest: Manifest = {
      format: 1,
      createdAt: s.clock.now().toISOString(),
      database: s.database.dialect,
      blobs,
      bytes: await folderBytes(partial),
    };
    await fsp.writeFile(path.join(partial, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const done = path.join(dest, name);
    await fsp.rename(partial, done);
    return { location: done, manifest };
  } catch (err) {
    await fsp.rm(partial, { recursive: true, force: true });
    throw err;
  }
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await fsp.stat(path.join(e.parentPath, e.name))).size;
  }
  return total;
}

/** Keeps the `keep` newest complete backups in a folder; removes older ones and abandoned partials. */
export async function pruneBackups(dest: string, keep: number): Promise<string[]> {
  if (isS3Url(dest)) return [];
  const entries = (await fsp.readdir(dest).catch(() => [] as string[])).filter((n) => n.startsWith(PREFIX));
  const complete = entries.filter((n) => !n.endsWith('.partial')).sort();
  const old = complete.slice(0, Math.max(0, complete.length - keep));
  for (const n of old) await fsp.rm(path.join(dest, n), { recursive: true, force: true });
  return old;
}

// ------------------------------------------------------------------ restoring

/** Puts a backup (a backup folder, or s3://bucket/prefix/kiln-backup-…) into this configuration's
 *  instance, which must be empty (no accounts): its database, then its blobs into the configured
 *  blob store. Run it with the server stopped. */
export async function restoreBackup(
  config: Config,
  source: string,
  openBlobs: () => Promise<BlobStore>,
): Promise<Manifest> {
  if (isS3Url(source)) {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'kiln-restore-'));
    try {
      const local = path.join(tmp, 'backup');
      await S3Folder.fromUrl(source).download(local);
      return await restoreBackup(config, local, openBlobs);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  const manifest = JSON.parse(await fsp.readFile(path.join(source, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.format !== 1) throw new Error(`Unknown backup format ${manifest.format}.`);
  const wants = config.databaseUrl ? 'postgres' : 'sqlite';
  if (manifest.database !== wants)
    throw new Error(`This backup is of a ${manifest.database} instance; this configuration uses ${wants}.`);
  if (wants === 'sqlite') await restoreSqlite(config, path.join(source, 'database.sqlite'));
  else await restorePostgres(config.databaseUrl!, path.join(source, 'database.pgdump'));
  const blobs = await openBlobs();
  try {
    const root = path.join(source, 'blobs');
    for (const e of await fsp.readdir(root, { withFileTypes: true, recursive: true }).catch(() => [])) {
      if (!e.isFile() || !BLOB_NAME.test(e.name)) continue;
      const bytes = await fsp.readFile(path.join(e.parentPath, e.name));
      if (sha256(bytes) !== e.name) throw new Error(`The backup's blob ${e.name} is damaged.`);
      await blobs.put(bytes);
    }
  } finally {
    await blobs.close();
  }
  return manifest;
}

async function restoreSqlite(config: Config, file: string) {
  const target = path.join(config.dataDir, 'kiln.sqlite');
  if (fs.existsSync(target)) {
    const SQLite = (await import('better-sqlite3')).default;
    const db = new SQLite(target, { readonly: true });
    try {
      const has = db.prepare("select name from sqlite_master where type = 'table' and name = 'accounts'").get();
      const n = has ? (db.prepare('select count(*) as n from accounts').get() as { n: number }).n : 0;
      if (n > 0) throw new Error(`${target} already holds ${n} account(s): restore into an empty instance.`);
    } finally {
      db.close();
    }
  }
  await fsp.mkdir(config.dataDir, { recursive: true });
  for (const f of [target, `${target}-wal`, `${target}-shm`]) await fsp.rm(f, { force: true });
  await fsp.copyFile(file, target);
}

async function restorePostgres(url: string, file: string) {
  // Imported here, not at start: an instance on SQLite never loads the PostgreSQL driver.
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const has = await client.query("select to_regclass('public.accounts') as t");
    if (has.rows[0].t) {
      const n = Number((await client.query('select count(*) as n from accounts')).rows[0].n);
      if (n > 0) throw new Error(`The database already holds ${n} account(s): restore into an empty instance.`);
    }
  } finally {
    await client.end();
  }
  // An instance that started once has its (empty) tables: the backup's replace them.
  await run('pg_restore', ['--clean', '--if-exists', '--no-owner', `--dbname=${url}`, file]);
}
