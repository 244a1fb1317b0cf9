// Storing an upload: bytes into the blob store (durable first), then the node row that points at them.
import type { Services } from '../services.ts';
import type { Plan } from '../store/schema.ts';
import { badRequest } from '../errors.ts';
import { assertUploadSize as planUploadSize } from '../billing/plans.ts';
import { nodeNameProblem } from '../core/names.ts';
import { checksum } from '../core/checksum.ts';
import { isUniqueViolation } from '../store/db.ts';
import { contentTypeFor } from './content-types.ts';
import { channels } from '../events/bus.ts';
import { newNodeRow } from '../nodes/rows.ts';

/** The change event for an upload's new bytes (the owner's sync streams hear every change). */
function publishSaved(s: Services, n: { id: number; owner_id: number; path: string; name: string; checksum: string | null; modified_at: string; size: number }) {
  return s.events
    .publish(channels.account(n.owner_id), {
      type: 'node-saved',
      nodeId: n.id,
      nodeType: 'upload',
      path: n.path ? `${n.path}/${n.name}` : n.name,
      checksum: n.checksum,
      modifiedAt: n.modified_at,
      size: n.size,
    })
    .catch((err) => console.error('publishing an upload event failed:', err));
}

export interface UploadInput {
  ownerId: number;
  plan: Plan;
  /** Parent folder id (0 at top level) and its path ('' at top level). */
  parentId: number;
  parentPath: string;
  fileName: string;
  bytes: Buffer;
}

/** 413 `quota-exceeded` over the plan's per-file size (the rule and its message: src/billing/plans.ts). */
export const assertUploadSize = planUploadSize;

/** `photo.png`, `photo-1.png`, `photo-2.png` … */
function candidateName(name: string, n: number): string {
  if (n === 0) return name;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}-${n}${name.slice(dot)}` : `${name}-${n}`;
}

/** Stores the file and returns its node. A name taken in the folder gets a numbered suffix. */
export async function storeUpload(s: Services, input: UploadInput) {
  assertUploadSize(input.plan, input.bytes.length);
  const problem = nodeNameProblem(input.fileName, 'upload');
  if (problem) throw badRequest(problem, 'invalid-name');
  const sha = await s.blobs.put(input.bytes);
  const now = s.clock.now().toISOString();
  for (let n = 0; n < 100; n++) {
    const name = candidateName(input.fileName, n);
    try {
      const row = await s.database.db
        .insertInto('nodes')
        .values(
          newNodeRow(
            { ownerId: input.ownerId, parentId: input.parentId, type: 'upload', name, path: input.parentPath, now },
            { checksum: checksum(input.bytes), size: input.bytes.length, content_type: contentTypeFor(name), blob_sha256: sha, saved_by_account_id: input.ownerId },
          ),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      void publishSaved(s, row); // never waits on the bus
      return row;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
    }
  }
  throw badRequest('Too many files with that name in this folder.', 'name-conflict');
}

/** Replaces an upload's bytes (the code editor's save of a text upload). */
export async function replaceUpload(s: Services, nodeId: number, plan: Plan, bytes: Buffer, by: number | null) {
  assertUploadSize(plan, bytes.length);
  const sha = await s.blobs.put(bytes);
  const sum = checksum(bytes);
  const row = await s.database.db
    .updateTable('nodes')
    .set({ blob_sha256: sha, checksum: sum, size: bytes.length, modified_at: s.clock.now().toISOString(), saved_by_account_id: by })
    .where('id', '=', nodeId)
    .where('type', '=', 'upload')
    .returning(['id', 'owner_id', 'path', 'name', 'checksum', 'modified_at', 'size'])
    .executeTakeFirst();
  if (row) void publishSaved(s, row); // never waits on the bus
  return { checksum: sum, size: bytes.length };
}
