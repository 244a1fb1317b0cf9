// Blobs as files under DATA_DIR/blobs/ab/cd/<sha256>: written to a temporary name, fsynced, renamed,
// and the folder fsynced, so a crash leaves either no blob or the whole blob.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../core/checksum.ts';
import type { BlobStore } from './store.ts';

const NAME = /^[0-9a-f]{64}$/;
const TMP_PREFIX = '.tmp-';

export class FilesystemBlobStore implements BlobStore {
  constructor(private root: string) {}

  private file(name: string): string {
    if (!NAME.test(name)) throw new Error('bad blob name');
    return path.join(this.root, name.slice(0, 2), name.slice(2, 4), name);
  }

  async put(bytes: Buffer): Promise<string> {
    const name = sha256(bytes);
    const target = this.file(name);
    if (await this.has(name)) return name;
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

  stream(name: string) {
    const f = this.file(name);
    return fs.existsSync(f) ? fs.createReadStream(f) : null;
  }

  async has(name: string): Promise<boolean> {
    try {
      await fsp.access(this.file(name));
      return true;
    } catch {
      return false;
    }
  }
}
