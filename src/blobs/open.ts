// Chooses the blob store once, at start, from the configuration (BLOB_STORE).
import fs from 'node:fs';
import path from 'node:path';
import type { BlobConfig } from '../config.ts';
import type { BlobStore } from './store.ts';
import { FilesystemBlobStore } from './filesystem.ts';
import { PostgresBlobStore } from './postgres.ts';
import { FallbackBlobStore } from './fallback.ts';

/** The store a configuration names (without the filesystem fallback). */
export async function blobStoreFor(c: BlobConfig, dataDir: string): Promise<BlobStore> {
  if (c.store === 'postgres') return PostgresBlobStore.open(c.databaseUrl);
  if (c.store === 's3') {
    const { S3BlobStore } = await import('./s3.ts');
    return S3BlobStore.open(c);
  }
  return new FilesystemBlobStore(path.join(dataDir, 'blobs'));
}

/** The configured store; when it is not the filesystem and DATA_DIR/blobs holds files from before,
 *  those are read from there until they are migrated. */
export async function openBlobStore(c: BlobConfig, dataDir: string): Promise<BlobStore> {
  const store = await blobStoreFor(c, dataDir);
  if (store.kind === 'filesystem') {
    void (store as FilesystemBlobStore)
      .sweepTemporary()
      .catch((err) => console.error('sweeping temporary blob files failed:', err));
    return store;
  }
  const older = path.join(dataDir, 'blobs');
  return fs.existsSync(older) ? new FallbackBlobStore(store, new FilesystemBlobStore(older)) : store;
}
