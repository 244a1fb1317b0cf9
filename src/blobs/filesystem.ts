// Blobs as files under DATA_DIR/blobs/ab/cd/<sha256>: written to a temporary name, fsynced, renamed,
// and the folder fsynced, so a crash leaves either no blob or the whole blob.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../core/checksum.ts';
import type { BlobStore } from './store.ts';

const NAME = /^[0-9a-f]{64}$/;

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
    const tmp = path.join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, target);
    const dh = await fsp.open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
    return name;
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
