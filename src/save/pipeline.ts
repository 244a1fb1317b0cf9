// THE save pipeline. Every writer of a document's HTML comes through `writeDocument`: browser save,
// editor, sync write, restore, instance copy, creation. Steps: normalize → skip if unchanged → version →
// content → (after commit) stylesheet + event. Version, content and checksum commit together.
import { withoutToolbar } from '../nodes/toolbar.ts';
import { documentForWrite, setStoredContent } from '../store/nodes.ts';
import type { Services } from '../services.ts';
import { checksum, sha256 } from '../core/checksum.ts';
import { KilnError, notFound, tooLarge } from '../errors.ts';
import { limits } from '../limits.ts';
import { publishNodeSaved, republishIfLost } from '../events/publish.ts';
import { inTransaction, type AfterCommit, type Tx } from '../store/transaction.ts';
import { formatHtml } from './formathtml.ts';
import { decodeUtf8Exact, packSnapshot, planVersion } from './versions.ts';

export type SaveKind = 'create' | 'browser' | 'editor' | 'sync' | 'restore' | 'instance' | 'upload-edit';

/** Who is writing. `writer` identifies one tab/session or one sync key, for `changedBy`. */
export interface SavedBy {
  kind: SaveKind;
  accountId: number | null;
  writer: string | null;
}

/** Writes a version and the content of a document inside an open transaction and updates the node's
 *  checksum, size and times. `prev` is the stored content (null for a new document). Returns the checksum. */
async function writeVersionAndContent(
  trx: Tx,
  nodeId: number,
  bytes: Buffer,
  prev: Buffer | null,
  by: SavedBy,
  now: string,
): Promise<{ checksum: string; size: number; versionId: number }> {
  if (bytes.length > limits.documentSize)
    throw tooLarge(`Documents are limited to ${limits.documentSize / 1024 / 1024} MB.`);
  const last = await trx
    .selectFrom('versions')
    .select(['id', 'backup_number', 'is_diff', 'snapshot_id'])
    .where('node_id', '=', nodeId)
    .orderBy('backup_number', 'desc')
    .limit(1)
    .executeTakeFirst();
  const backupNumber = (last?.backup_number ?? 0) + 1;
  const version = await trx
    .insertInto('versions')
    .values({
      node_id: nodeId,
      backup_number: backupNumber,
      ...versionBody(backupNumber, bytes, prev, last),
      content_hash: sha256(bytes),
      size: bytes.length,
      saved_by_kind: by.kind,
      saved_by_account_id: by.accountId,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const sum = checksum(bytes);
  await setStoredContent(trx, nodeId, bytes, {
    hadContent: prev !== null,
    checksum: sum,
    now,
    accountId: by.accountId,
    writer: by.writer,
  });
  return { checksum: sum, size: bytes.length, versionId: version.id };
}

/** Backup 1 and every 20th are full snapshots (gzip-packed: every snapshot is packed, so reading
 *  never guesses); the others are diffs against the version before. See versions.ts. */
function versionBody(
  backupNumber: number,
  bytes: Buffer,
  prev: Buffer | null,
  last: { id: number; is_diff: number; snapshot_id: number | null } | undefined,
) {
  const plan = last ? planVersion(backupNumber, prev, bytes) : ({ isDiff: false } as const);
  if (!plan.isDiff)
    return {
      is_diff: 0 as const,
      html: packSnapshot(bytes),
      diff_content: null,
      diff_from_id: null,
      snapshot_id: null,
    };
  return {
    is_diff: 1 as const,
    html: null,
    diff_content: plan.diffContent,
    diff_from_id: last!.id,
    snapshot_id: last!.is_diff ? last!.snapshot_id : last!.id,
  };
}

export interface SaveInput {
  nodeId: number;
  bytes: Buffer;
  by: SavedBy;
  /** When given, the save succeeds only if the stored checksum equals it (412 otherwise). */
  ifMatch?: string | null;
}

export interface SaveResult {
  changed: boolean;
  checksum: string;
  size: number;
  modifiedAt: string;
}

/** The node fields the after-save steps need. */
export interface SavedNode {
  id: number;
  owner_id: number;
  path: string;
  name: string;
}

// Saves to one document are serialized within a process; across processes the checksum
// compare-and-swap in the transaction decides.
const queues = new Map<number, Promise<unknown>>();
function serialized<T>(key: number, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => {});
  queues.set(key, tail);
  tail.then(() => queues.get(key) === tail && queues.delete(key));
  return run;
}

/** A save in a transaction of its own (browser, editor, sync, restore). */
export async function saveDocument(s: Services, input: SaveInput): Promise<SaveResult> {
  return serialized(input.nodeId, () => inTransaction(s, (tx, after) => writeDocument(s, tx, after, input)));
}

/** Step 1: the owner's toolbar tag never stays (src/nodes/toolbar.ts); then re-indent documents that opt
 *  in with `<html formathtml="true">`; all others keep their exact bytes. */
export function normalize(sent: Buffer): Buffer {
  const bytes = withoutToolbar(sent);
  // Cheap pre-check (the attribute name is case-insensitive); bytes that are not exact UTF-8 are never touched.
  if (!/formathtml/i.test(bytes.toString('latin1'))) return bytes;
  const text = decodeUtf8Exact(bytes);
  if (text === null) return bytes;
  const formatted = formatHtml(text);
  return formatted === text ? bytes : Buffer.from(formatted, 'utf8');
}

/** THE write of a document's HTML, inside the caller's transaction: normalize → lock the row →
 *  compare If-Match (412) → skip when unchanged → version + content + checksum → queue the
 *  stylesheet and the events for after the commit. Every writer comes through here: saves, creation
 *  (a node inserted earlier in the same transaction), instance copies, imports. */
export async function writeDocument(s: Services, tx: Tx, after: AfterCommit, input: SaveInput): Promise<SaveResult> {
  const bytes = normalize(input.bytes);
  const now = s.clock.now().toISOString();
  // Several processes on PostgreSQL: saves of one document queue on its row lock, so the checksum
  // compare below sees the previous winner's commit (one 200, the rest 412).
  await s.database.lock.row(tx, 'nodes', input.nodeId);
  const node = await documentForWrite(tx, input.nodeId);
  if (node?.type !== 'site') throw notFound('No such document.');
  const stored = node.html ? Buffer.from(node.html) : null;
  if (input.ifMatch != null && input.ifMatch !== node.checksum) {
    throw conflictError(node.checksum ?? '', node.saved_by_account_id, node.saved_by_writer, input.by);
  }
  if (stored?.equals(bytes)) {
    const same = { checksum: node.checksum!, size: bytes.length, modifiedAt: node.modified_at };
    after.push(() =>
      republishIfLost(s, { ...node, type: 'site' }, same, {
        writer: input.by.writer,
        html: bytes.toString('utf8'),
        client: input.by.kind,
      }),
    );
    return { changed: false, ...same };
  }
  const written = await writeVersionAndContent(tx, node.id, bytes, stored, input.by, now);
  const result = { changed: true, checksum: written.checksum, size: written.size, modifiedAt: now };
  after.push(() => afterContentChange(s, node, bytes, result, input.by.writer, input.by.kind));
  return result;
}

/** What follows a committed content change, outside the transaction: the utility stylesheet and the
 *  change events (the owner's sync streams, the document's `saved` lane). */
function afterContentChange(
  s: Services,
  node: SavedNode,
  bytes: Buffer,
  result: { checksum: string; size: number; modifiedAt: string },
  writer: string | null,
  client: SaveKind,
): Promise<unknown> {
  s.metrics.saves.inc({ via: client });
  const html = bytes.toString('utf8');
  void s.stylesheets.schedule(node.id, html);
  // The answer waits for the events only while the bus is flowing (src/store/transaction.ts).
  return publishNodeSaved(s, { ...node, type: 'site' }, result, { writer, html, client });
}

export function conflictError(
  etag: string,
  lastAccount: number | null,
  lastWriter: string | null,
  by: SavedBy,
): KilnError {
  const extra: Record<string, unknown> = { etag };
  if (lastAccount !== null) extra.changedBy = lastAccount === by.accountId ? 'another-tab' : 'another-person';
  void lastWriter;
  return new KilnError(412, 'This document was changed since you loaded it.', 'conflict', extra);
}
