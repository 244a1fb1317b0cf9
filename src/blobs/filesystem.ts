// Blobs as files under DATA_DIR/blobs/ab/cd/<sha256>: written to a temporary name, fsynced, renamed,
// and the folder fsynced, so a crash leaves either no blob or the whole blob.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../core/checksum.ts';
import { BLOB_NAME, type BlobListing, type BlobStore, type ByteRange } from './store.ts';

const TMP_PREFIX = '.tmp-';

export class FilesystemBlobStore implements BlobStore {
  readonly kind = 'filesystem' as const;
  private root: string;
  constructor(root: string) {
    this.root = root;
  }

  private file(name: string): string {
    if (!BLOB_NAME.test(name)) throw new Error('bad blob name');
    return path.join(this.root, name.slice(0, 2), name.slice(2, 4), name);
  }

  async put(bytes: Buffer): Promise<string> {
    const name = sha256(bytes);
    const target = this.file(name);
    if (await this.has(name)) {
      // Named again: renewed, so a sweep running now spares it.
      const now = new Date();
      await fsp.utimes(target, now, now).catch(() => {});
      return name;
    }
    const dir = path.dirname(target);
    await fsp.mkdir(dir, { recursive: true });
    const tmp = path.join(dir, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
    try {
      const fh = await fsp.open(tmp, 'w');
      try {
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, target);
    } catch (err) {
      // A full disk or a failed write leaves nothing behind (a leftover would keep a full disk full).
      await fsp.rm(tmp, { force: true }).catch(() => {});
      throw err;
    }
    const dh = await fsp.open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
    return name;
  }

  /** Removes temporary files a killed process left behind (run at start; a write in progress in another
   *  process is younger than `olderThanMs`). Returns how many went. */
  async sweepTemporary(olderThanMs = 60 * 60_000): Promise<number> {
    let removed = 0;
    const cutoff = Date.now() - olderThanMs;
    const walk = async (dir: string, depth: number): Promise<void> => {
      const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (e.isDirectory() && depth < 2) await walk(full, depth + 1);
        else if (e.isFile() && e.name.startsWith(TMP_PREFIX)) {
          const st = await fsp.stat(full).catch(() => null);
          if (
            st &&
            st.mtimeMs < cutoff &&
            (await fsp.rm(full, { force: true }).then(
              () => true,
              () => false,
            ))
          )
            removed++;
        }
      }
    };
    await walk(this.root, 0);
    return removed;
  }

  async get(name: string): Promise<Buffer | null> {
    try {
      return await fsp.readFile(this.file(name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async stream(name: string, range?: ByteRange) {
    const f = this.file(name);
    try {
      const fh = await fsp.open(f, 'r');
      return fh.createReadStream(range ? { start: range.start, end: range.end } : {});
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async storedAt(name: string): Promise<Date | null> {
    const st = await fsp.stat(this.file(name)).catch(() => null);
    return st ? st.mtime : null;
  }

  async delete(name: string): Promise<void> {
    await fsp.rm(this.file(name), { force: true });
  }

  async *list(): AsyncIterable<BlobListing> {
    for (const a of await fsp.readdir(this.root).catch(() => [])) {
      for (const b of await fsp.readdir(path.join(this.root, a)).catch(() => [])) {
        const dir = path.join(this.root, a, b);
        for (const name of await fsp.readdir(dir).catch(() => [])) {
          if (!BLOB_NAME.test(name)) continue;
          const st = await fsp.stat(path.join(dir, name)).catch(() => null);
          if (st) yield { name, storedAt: st.mtime };
        }
      }
    }
  }

  async reachable(): Promise<boolean> {
    try {
      await fsp.mkdir(this.root, { recursive: true });
      await fsp.access(this.root, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}

  async has(name: string): Promise<boolean> {
    try {
      await fsp.access(this.file(name));
      return true;
    } catch {
      return false;
    }
  }
}
