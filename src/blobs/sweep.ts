// Unreferenced blobs go: a blob that no node names — live or in the trash (a version of a document is
// stored with the document, never as a blob) — and that was not written within the grace period.
// The grace period covers an upload between its blob's write and its row's insert, and a put of bytes
// already stored renews their time (src/blobs/store.ts), so a blob named again while the sweep runs is
// spared; each candidate is looked up once more just before it is deleted.
import type { Services } from '../services.ts';
import type { BlobStore } from './store.ts';
import { blobNamed, blobsNamed } from '../store/nodes.ts';

export const SWEEP_GRACE_MS = 24 * 60 * 60_000;

export async function sweepBlobs(
  s: Pick<Services, 'database' | 'clock'> & { blobs: BlobStore },
  graceMs = SWEEP_GRACE_MS,
): Promise<{ kept: number; deleted: number }> {
  const named = await blobsNamed(s.database.db);
  const cutoff = s.clock.now().getTime() - graceMs;
  let kept = 0;
  let deleted = 0;
  for await (const b of s.blobs.list()) {
    if (named.has(b.name) || b.storedAt.getTime() > cutoff) {
      kept++;
      continue;
    }
    const at = await s.blobs.storedAt(b.name);
    if (at && at.getTime() <= cutoff && !(await blobNamed(s.database.db, b.name))) {
      await s.blobs.delete(b.name);
      deleted++;
    } else kept++;
  }
  return { kept, deleted };
}

/** Copies every blob of `from` that `to` lacks (run it again to copy what arrived meanwhile). */
export async function copyBlobs(from: BlobStore, to: BlobStore, onEach?: (n: number) => void) {
  let copied = 0;
  let present = 0;
  for await (const b of from.list()) {
    if (await to.has(b.name)) {
      present++;
      continue;
    }
    const bytes = await from.get(b.name);
    if (!bytes) continue;
    const name = await to.put(bytes);
    if (name !== b.name) throw new Error(`blob ${b.name} read back as ${name}: the source is damaged`);
    copied++;
    onEach?.(copied);
  }
  return { copied, present };
}
