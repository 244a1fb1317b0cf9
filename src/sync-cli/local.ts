// The local side of `kiln sync`: the folder's files (minus what `.kilnignore` and the defaults leave
// out, never through a symlink), their checksums (the engine's: the first 16 hex characters of SHA-256,
// cached by size, mtime and inode), atomic writes, the local trash and the state file.
import fs from 'node:fs/promises';
import { createReadStream, type Stats } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import ignoreFactory, { type Ignore } from 'ignore';
import type { BaseFile, LocalFile, Pending } from './plan.ts';

/** Never synced: Kiln's own folder, version control, dependencies, editor and system droppings. */
export const DEFAULT_IGNORES = [
  '.kiln/',
  '.git/',
  '.hg/',
  '.svn/',
  'node_modules/',
  '.kilnignore',
  '*.swp',
  '*.swo',
  '*.swx',
  '*~',
  '.#*',
  '#*#',
  '*.tmp',
  '.DS_Store',
  'Thumbs.db',
  '4913',
];

export const checksumOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

export async function checksumOfFile(abs: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(abs)) h.update(chunk as Buffer);
  return h.digest('hex').slice(0, 16);
}

export class LocalFolder {
  readonly dir: string;
  readonly kilnDir: string;
  private ig: Ignore;
  private ignoreMtime = -1;
  /** rel → [size, mtimeMs, ino, sum]: files are read again only when these change. */
  private sums = new Map<string, [number, number, number, string]>();
  /** NFC rel → the name on disk (they differ for names written in another normalization). */
  readonly onDisk = new Map<string, string>();

  constructor(dir: string) {
    this.dir = path.resolve(dir);
    this.kilnDir = path.join(this.dir, '.kiln');
    this.ig = ignoreFactory().add(DEFAULT_IGNORES);
  }

  abs(rel: string): string {
    const disk = this.onDisk.get(rel) ?? rel;
    const p = path.join(this.dir, ...disk.split('/'));
    // Never outside the folder, whatever a name says.
    if (p !== this.dir && !p.startsWith(this.dir + path.sep))
      throw new Error(`refusing a path outside the folder: ${rel}`);
    return p;
  }

  /** Reloads `.kilnignore` when it changed. */
  async loadIgnore(): Promise<void> {
    const file = path.join(this.dir, '.kilnignore');
    const st = await fs.stat(file).catch(() => null);
    const m = st ? st.mtimeMs : 0;
    if (m === this.ignoreMtime) return;
    this.ignoreMtime = m;
    this.ig = ignoreFactory().add(DEFAULT_IGNORES);
    if (st) this.ig.add(await fs.readFile(file, 'utf8'));
  }

  /** True when a relative path (a folder ends in `/`) is left out. */
  ignored(rel: string, isDir = false): boolean {
    if (!rel || rel === '.') return false;
    try {
      return this.ig.ignores(isDir && !rel.endsWith('/') ? `${rel}/` : rel);
    } catch {
      // Not a path inside the folder (the matcher refuses those): never one of its files.
      return true;
    }
  }

  /** Every file and folder (NFC relative paths), checksums included. Symlinks are never followed. */
  async scan(): Promise<{ files: Map<string, LocalFile>; dirs: Set<string>; links: string[] }> {
    await this.loadIgnore();
    const files = new Map<string, LocalFile>();
    const dirs = new Set<string>();
    const links: string[] = [];
    this.onDisk.clear();
    const walk = async (relDisk: string) => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await fs.readdir(relDisk ? path.join(this.dir, relDisk) : this.dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const childDisk = relDisk ? `${relDisk}/${e.name}` : e.name;
        const rel = childDisk.normalize('NFC');
        if (e.isSymbolicLink()) {
          if (!this.ignored(rel)) links.push(rel);
          continue;
        }
        if (e.isDirectory()) {
          if (this.ignored(rel, true)) continue;
          dirs.add(rel);
          if (rel !== childDisk) this.onDisk.set(rel, childDisk);
          await walk(childDisk);
        } else if (e.isFile()) {
          if (this.ignored(rel)) continue;
          if (rel !== childDisk) this.onDisk.set(rel, childDisk);
          const abs = path.join(this.dir, childDisk);
          const st = await fs.stat(abs).catch(() => null);
          if (!st) continue;
          const sum = await this.sumOf(rel, abs, st);
          if (sum) files.set(rel, { sum, size: st.size });
        }
      }
    };
    await walk('');
    for (const k of this.sums.keys()) if (!files.has(k)) this.sums.delete(k);
    return { files, dirs, links };
  }

  private async sumOf(rel: string, abs: string, st: Stats): Promise<string | null> {
    const known = this.sums.get(rel);
    if (known && known[0] === st.size && known[1] === st.mtimeMs && known[2] === st.ino) return known[3];
    const sum = await checksumOfFile(abs).catch(() => null);
    if (sum) this.sums.set(rel, [st.size, st.mtimeMs, st.ino, sum]);
    return sum;
  }

  /** The current checksum of one file, or null when it is not there. */
  async current(rel: string): Promise<string | null> {
    const st = await fs.lstat(this.abs(rel)).catch(() => null);
    if (!st?.isFile()) return null;
    return this.sumOf(rel, this.abs(rel), st);
  }

  async read(rel: string): Promise<Buffer> {
    return fs.readFile(this.abs(rel));
  }

  /** Writes a file whole or not at all: a temporary file in .kiln/tmp renamed over the target, and only
   *  while the target is still what the plan saw (`expect`, null: absent). False when it changed. */
  async writeAtomic(rel: string, bytes: Buffer, expect: string | null): Promise<boolean> {
    const tmpDir = path.join(this.kilnDir, 'tmp');
    await fs.mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, `${randomBytes(8).toString('hex')}.part`);
    await fs.writeFile(tmp, bytes);
    try {
      if ((await this.current(rel)) !== expect) return false;
      const target = this.abs(rel);
      await this.mkdirs(path.dirname(target));
      await fs.rename(tmp, target);
      const st = await fs.stat(target);
      this.sums.set(rel, [st.size, st.mtimeMs, st.ino, checksumOf(bytes)]);
      return true;
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  /** mkdir -p that refuses to go through a symlink. */
  async mkdirs(absDir: string): Promise<void> {
    const rel = path.relative(this.dir, absDir);
    let cur = this.dir;
    for (const part of rel ? rel.split(path.sep) : []) {
      cur = path.join(cur, part);
      const st = await fs.lstat(cur).catch(() => null);
      if (st?.isSymbolicLink())
        throw new Error(`refusing to write through the symlink ${path.relative(this.dir, cur)}`);
      if (!st)
        await fs.mkdir(cur).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
    }
  }

  /** Moves a file within the folder, only when `to` is free. */
  async move(from: string, to: string): Promise<boolean> {
    const target = path.join(this.dir, ...to.split('/'));
    if (await fs.lstat(target).catch(() => null)) return false;
    await this.mkdirs(path.dirname(target));
    await fs.rename(this.abs(from), target);
    this.onDisk.delete(from);
    return true;
  }

  /** Moves a file into `.kiln/trash/<date>/<rel>` (never a hard delete). */
  async trash(rel: string): Promise<string> {
    const day = new Date().toISOString().slice(0, 10);
    let target = path.join(this.kilnDir, 'trash', day, ...rel.split('/'));
    for (let n = 2; await fs.lstat(target).catch(() => null); n++) {
      const ext = path.extname(rel);
      target = path.join(
        this.kilnDir,
        'trash',
        day,
        ...`${rel.slice(0, rel.length - ext.length)} ${n}${ext}`.split('/'),
      );
    }
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.rename(this.abs(rel), target);
    this.onDisk.delete(rel);
    return path.relative(this.dir, target);
  }

  /** Removes an empty folder; false when it holds anything. */
  async rmdirIfEmpty(rel: string): Promise<boolean> {
    try {
      await fs.rmdir(this.abs(rel));
      return true;
    } catch {
      return false;
    }
  }
}

// ------------------------------------------------------------------ state

export interface SyncState {
  version: 1;
  url: string;
  team: string | null;
  accountId: number | null;
  files: Record<string, BaseFile>;
  dirs: string[];
  skipped: Record<string, { sum: string; msg: string }>;
  pending: Record<string, Pending>;
  lastEventId: string | null;
}

export function emptyState(url: string, team: string | null): SyncState {
  return { version: 1, url, team, accountId: null, files: {}, dirs: [], skipped: {}, pending: {}, lastEventId: null };
}

export async function readState(folder: LocalFolder): Promise<SyncState | null> {
  const text = await fs.readFile(path.join(folder.kilnDir, 'state.json'), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const s = JSON.parse(text) as SyncState;
    if (s.version !== 1 || typeof s.files !== 'object') return null;
    return { ...emptyState(s.url, s.team), ...s };
  } catch {
    return null;
  }
}

/** Written whole or not at all: a temporary file renamed over state.json (a kill -9 leaves the old or
 *  the new state, never half of one). `durable` also flushes it to disk (at the end of a run). */
export async function writeState(folder: LocalFolder, state: SyncState, durable = false): Promise<void> {
  await fs.mkdir(folder.kilnDir, { recursive: true });
  const file = path.join(folder.kilnDir, 'state.json');
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await fs.open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(JSON.stringify(state));
    if (durable) await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
}

/** One run per folder: `.kiln/lock` holds the pid of the run. A lock whose process is gone (a kill -9)
 *  is taken over. Returns a release function, or the pid of the live run that holds it. */
export async function lockFolder(folder: LocalFolder): Promise<(() => Promise<void>) | number> {
  await fs.mkdir(folder.kilnDir, { recursive: true });
  const file = path.join(folder.kilnDir, 'lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await fs.open(file, 'wx', 0o600);
      await fh.writeFile(String(process.pid));
      await fh.close();
      return async () => {
        await fs.rm(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(await fs.readFile(file, 'utf8').catch(() => ''));
      if (pid > 0 && pid !== process.pid && alive(pid)) return pid;
      await fs.rm(file, { force: true });
    }
  }
  throw new Error(`cannot lock ${file}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
