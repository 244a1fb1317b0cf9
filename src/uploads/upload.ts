// THE upload writers. Bytes go to the blob store first (durable, content-addressed), then one
// statement points a row at them:
// - `insertUpload`: a new upload, with an explicit policy for a taken name (`number`: photo-1.png,
//   photo-2.png … as the browser's upload does; `refuse`: 409 `name-conflict`, as a sync tool names its
//   files). Inside the caller's transaction when it gives one.
// - `replaceUpload`: new bytes for an upload, the If-Match condition in the UPDATE itself (so two
//   writers from one base cannot both win).
// - `storeUploadInPlaceOf`: the browser's "Replace": the old upload to the trash, the new one in its place.
// All publish node-saved after the commit.
import { insertNode, nodeById, updateNodeIf } from '../store/nodes.ts';
import type { Services } from '../services.ts';
import type { Executor, Plan, NodeRow } from '../store/schema.ts';
import { nameConflict, trashIn } from '../nodes/tree.ts';
import { KilnError, badRequest, conflict } from '../errors.ts';
import { assertUploadSize as planUploadSize } from '../billing/plans.ts';
import { nodeNameProblem } from '../core/names.ts';
import { checksum } from '../core/checksum.ts';
import { ifMatchHolds, type IfMatch } from '../core/conditional.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { contentTypeFor } from './content-types.ts';
import { newNodeRow } from '../nodes/rows.ts';
import { publishNodeSaved } from '../events/publish.ts';
import type { RecordNote } from '../events/bus.ts';
import { conflictError } from '../save/pipeline.ts';
import { agentRecorded } from '../save/saved.ts';
import { eventsOut, inTransaction, type AfterCommit, type Tx } from '../store/transaction.ts';

/** 413 `too-large` over the plan's per-file size (the rule and its message: src/billing/plans.ts). */
export const assertUploadSize = planUploadSize;

/** An upload's bytes, in the blob store. */
export interface StoredBytes {
  sha: string;
  checksum: string;
  size: number;
}

/** Checks the plan's size and stores the bytes (durable before any row points at them). */
export async function storeBytes(s: Services, plan: Plan, bytes: Buffer): Promise<StoredBytes> {
  assertUploadSize(s, plan, bytes.length);
  return { sha: await s.blobs.put(bytes), checksum: checksum(bytes), size: bytes.length };
}

/** Who writes: the account and the writer (session or sync key) recorded on the row. */
export interface UploadWriter {
  accountId: number | null;
  writer: string | null;
  /** An agent writes it: how the activity feed names it ("<client> via <grant>", as its saves). */
  agent?: string;
}

/** The activity feed's client of an upload's change: an agent's name, else the writer's own. */
const clientOf = (by: UploadWriter) => (by.agent ? agentRecorded(by.agent) : undefined);

export interface InsertUploadInput {
  ownerId: number;
  /** Parent folder id (0 at top level) and its path ('' at top level). */
  parentId: number;
  parentPath: string;
  name: string;
  stored: StoredBytes;
  by: UploadWriter;
  /** A name taken in the folder: `number` tries photo-1.png, photo-2.png …; `refuse` is 409. */
  ifTaken: 'number' | 'refuse';
  /** The sync API marks what it wrote as synced. */
  syncedAt?: string;
  /** A collection record: told to open collection dashboards with the change. */
  record?: RecordNote;
}

/** `photo.png`, `photo-1.png`, `photo-2.png` … */
function candidateName(name: string, n: number): string {
  if (n === 0) return name;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}-${n}${name.slice(dot)}` : `${name}-${n}`;
}

/** Inserts the upload's row. With a transaction (`tx`, `after`), the row is part of it and the event
 *  waits for its commit; a taken name is then always 409 (one statement per transaction). */
export async function insertUpload(
  s: Services,
  input: InsertUploadInput,
  tx?: { tx: Tx; after: AfterCommit },
): Promise<NodeRow> {
  const problem = nodeNameProblem(input.name, 'upload');
  if (problem) throw badRequest(problem, 'invalid-name');
  const db: Executor = tx?.tx ?? s.database.db;
  const now = s.clock.now().toISOString();
  const tries = input.ifTaken === 'number' && !tx ? 100 : 1;
  for (let n = 0; n < tries; n++) {
    const name = candidateName(input.name, n);
    try {
      const row = await insertNode(
        db,
        newNodeRow(
          { ownerId: input.ownerId, parentId: input.parentId, type: 'upload', name, path: input.parentPath, now },
          {
            checksum: input.stored.checksum,
            size: input.stored.size,
            content_type: contentTypeFor(name),
            blob_sha256: input.stored.sha,
            saved_by_account_id: input.by.accountId,
            saved_by_writer: input.by.writer,
            ...(input.syncedAt ? { last_synced_at: input.syncedAt } : {}),
          },
        ),
      );
      const publish = () =>
        publishNodeSaved(
          s,
          row,
          { checksum: row.checksum, size: row.size, modifiedAt: row.modified_at },
          { writer: input.by.writer, record: input.record, client: clientOf(input.by) },
        );
      if (tx) tx.after.push(publish);
      else await eventsOut(s, [publish()]); // while the bus is flowing (src/store/transaction.ts)
      return row;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      if (input.ifTaken === 'refuse' || tx) throw new KilnError(409, 'That name was just taken.', 'name-conflict');
    }
  }
  throw conflict('Too many files with that name in this folder.', 'name-conflict');
}

export interface UploadInput {
  ownerId: number;
  plan: Plan;
  parentId: number;
  parentPath: string;
  fileName: string;
  bytes: Buffer;
  /** Who uploads (the activity feed and the version list name them); none: Kiln itself. */
  by?: UploadWriter;
}

/** The browser's upload: stores the file and returns its node; a taken name gets a numbered suffix. */
export async function storeUpload(s: Services, input: UploadInput): Promise<NodeRow> {
  const problem = nodeNameProblem(input.fileName, 'upload');
  if (problem) throw badRequest(problem, 'invalid-name');
  const stored = await storeBytes(s, input.plan, input.bytes);
  return insertUpload(s, {
    ownerId: input.ownerId,
    parentId: input.parentId,
    parentPath: input.parentPath,
    name: input.fileName,
    stored,
    by: input.by ?? { accountId: input.ownerId, writer: null },
    ifTaken: 'number',
  });
}

/** The browser's "Replace": the new file takes the name and place of `replaces` (an upload in the same
 *  folder), which goes to the trash (restorable; pages that link to the name get the new file). One
 *  transaction: the old file is in the trash exactly when the new one has its name. */
export async function storeUploadInPlaceOf(s: Services, input: UploadInput & { replaces: NodeRow }): Promise<NodeRow> {
  const old = input.replaces;
  const stored = await storeBytes(s, input.plan, input.bytes);
  const by = input.by ?? { accountId: input.ownerId, writer: null };
  return inTransaction(s, async (tx, after) => {
    await trashIn(s, tx, after, [old], by.writer, by.agent);
    const upload = { ownerId: old.owner_id, parentId: old.parent_id, parentPath: old.path, name: old.name };
    return insertUpload(s, { ...upload, stored, by, ifTaken: 'refuse' }, { tx, after });
  }).catch(nameConflict);
}

export interface ReplaceUploadInput {
  node: NodeRow;
  plan: Plan;
  /** The new bytes, or the same already stored (a caller that writes inside a transaction stores
   *  them before opening it). */
  bytes: Buffer | StoredBytes;
  by: UploadWriter & { kind: 'upload-edit' | 'sync' | 'agent' };
  /** When given, the write happens only if it holds for the stored checksum (412 otherwise). */
  ifMatch: IfMatch | null;
  /** The sync API marks what it wrote as synced. */
  syncedAt?: string;
  /** A collection record: told to open collection dashboards with the change. */
  record?: RecordNote;
}

/** New bytes for an upload: the blob first, then one UPDATE that carries the If-Match condition.
 *  Unchanged bytes write nothing. With a transaction, the UPDATE is part of it and the event waits
 *  for its commit. */
export async function replaceUpload(
  s: Services,
  input: ReplaceUploadInput,
  tx?: { tx: Tx; after: AfterCommit },
): Promise<{ changed: boolean; node: NodeRow }> {
  const { node, ifMatch } = input;
  const db: Executor = tx?.tx ?? s.database.db;
  const conflict = (n: Pick<NodeRow, 'checksum' | 'saved_by_account_id' | 'saved_by_writer'>) =>
    conflictError(n.checksum ?? '', n.saved_by_account_id, n.saved_by_writer, input.by);
  if (!ifMatchHolds(ifMatch, node.checksum)) throw conflict(node);
  // The tag that held is the stored checksum: the UPDATE requires it still is.
  const expected = ifMatch?.kind === 'tags' ? node.checksum : null;
  const sum = Buffer.isBuffer(input.bytes) ? checksum(input.bytes) : input.bytes.checksum;
  if (node.checksum === sum) return { changed: false, node };
  const stored = Buffer.isBuffer(input.bytes) ? await storeBytes(s, input.plan, input.bytes) : input.bytes;
  const now = s.clock.now().toISOString();
  // The If-Match condition is part of the UPDATE: of two writers from one base, one wins.
  const updated = await updateNodeIf(
    db,
    node.id,
    {
      blob_sha256: stored.sha,
      checksum: stored.checksum,
      size: stored.size,
      modified_at: now,
      saved_by_account_id: input.by.accountId,
      saved_by_writer: input.by.writer,
      ...(input.syncedAt ? { last_synced_at: input.syncedAt } : {}),
    },
    { type: 'upload', ...(expected !== null ? { checksum: expected } : {}) },
  );
  if (!updated) {
    const current = await nodeById(db, node.id);
    if (current?.type !== 'upload') throw new KilnError(404, 'No such file.', 'not-found');
    throw conflict(current);
  }
  const publish = () =>
    publishNodeSaved(
      s,
      updated,
      { checksum: updated.checksum, size: updated.size, modifiedAt: now },
      { writer: input.by.writer, record: input.record, client: clientOf(input.by) },
    );
  if (tx) tx.after.push(publish);
  else await eventsOut(s, [publish()]); // while the bus is flowing (src/store/transaction.ts)
  return { changed: true, node: updated };
}
