// THE save pipeline. Every writer of a document's HTML comes through `writeDocument`: browser save,
// editor, sync write, restore, instance copy, creation. Steps: normalize → skip if unchanged → version →
// content → (after commit) stylesheet + event. Version, content and checksum commit together.
import { withoutToolbar, withoutToolbarText } from '../ui/toolbar.ts';
import { storedContent, versionWritten } from '../store/nodes.ts';
import type { Services } from '../services.ts';
import { checksumOfHash, sha256 } from '../core/checksum.ts';
import { ifMatchHolds, type IfMatch } from '../core/conditional.ts';
import { KilnError, notFound, tooLarge } from '../errors.ts';
import { limits } from '../limits.ts';
import { activityLine, nodeSavedEvent, publishNodeSaved, republishIfLost } from '../events/publish.ts';
import { inTransaction, type AfterCommit, type Tx } from '../store/transaction.ts';
import type { GuardCheck } from '../store/saves.ts';
import type { DocumentForWrite } from '../store/document-for-write.ts';
import type { NodeRow } from '../store/schema.ts';
import { formatHtml } from './formathtml.ts';
import { guardCheckOf } from '../guard/guard.ts';
import { decodeUtf8Exact, isSnapshot, packSnapshot, planTextVersion } from './versions.ts';
import { checkStaleSave } from './stale.ts';
import { changedElsewhereBy, recordedKind, type SavedBy, type SavedNode } from './saved.ts';

/** What a save writes, worked out once: the bytes, their text (null when not exact UTF-8) and SHA-256. */
interface Content {
  bytes: Buffer;
  text: string | null;
  hash: string;
}

/** Writes a version, the content, the activity line and the guard's owed check (when there is one) of a document
 *  inside an open transaction and updates the node's checksum, size and times. Returns the checksum and the
 *  version's id. */
async function writeVersionAndContent(
  s: Services,
  trx: Tx,
  node: DocumentForWrite,
  content: Content,
  last: Newest | undefined,
  by: SavedBy,
  now: string,
  check: GuardCheck | null,
  quiet = false,
): Promise<{ sum: string; versionId: number; backupNumber: number }> {
  const { bytes } = content;
  if (bytes.length > limits.documentSize)
    throw tooLarge(`Documents are limited to ${limits.documentSize / 1024 / 1024} MB.`);
  const backupNumber = (last?.backup_number ?? 0) + 1;
  // The content before this save: the version diff starts from it, and the store may write only what changed.
  const previous = last ? await previousContent(s, trx, node.id, last.content_hash, !isSnapshot(backupNumber)) : null;
  const version = {
    node_id: node.id,
    backup_number: backupNumber,
    ...versionBody(backupNumber, content, previous?.text ?? null, last),
    content_hash: content.hash,
    size: bytes.length,
    saved_by_kind: recordedKind(by),
    saved_by_account_id: by.accountId,
    created_at: now,
  };
  const sum = checksumOfHash(content.hash);
  // The activity line commits with the save (one commit, one disk flush, instead of two).
  const event = nodeSavedEvent(
    { ...node, type: 'site' },
    { checksum: sum, size: bytes.length, modifiedAt: now },
    { writer: by.writer },
  );
  const versionId = await s.database.saves.write(trx, {
    version,
    bytes,
    previous: previous?.bytes ?? null,
    layout: node.layout,
    node: { id: node.id, checksum: sum, now, accountId: by.accountId, writer: by.writer },
    activity: quiet ? null : activityLine(node.owner_id, event, now, recordedKind(by)),
    check,
  });
  // What the next save of the document diffs against, before the commit: a save grouped into the same commit
  // (src/store/writes.ts) needs it, and the memo is checked against the newest version's hash, so a commit that
  // fails leaves it unused, never wrong.
  if (content.text !== null) s.documents.texts.set(node.id, { hash: content.hash, text: content.text, bytes });
  return { sum, versionId, backupNumber };
}

type Newest = NonNullable<DocumentForWrite['last']>;

/** Backup 1 and every 20th are full snapshots (gzip-packed: every snapshot is packed, so reading
 *  never guesses); the others are diffs against the version before. See versions.ts. */
function versionBody(backupNumber: number, content: Content, prevText: string | null, last: Newest | undefined) {
  const plan = planTextVersion(backupNumber, prevText, content.text);
  if (!plan.isDiff)
    return {
      is_diff: 0 as const,
      html: packSnapshot(content.bytes),
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

/** The stored content (whose SHA-256 is `hash`) and its text (null when it is not exact UTF-8): this process's
 *  memo of its last save of the document when it is that one, else read when `read` (null when not). */
async function previousContent(s: Services, trx: Tx, nodeId: number, hash: string, read: boolean) {
  const memo = s.documents.texts.get(nodeId);
  if (memo?.hash === hash) return memo;
  if (!read) return null;
  const stored = await storedContent(trx, nodeId);
  return stored ? { text: decodeUtf8Exact(stored.html), bytes: stored.html } : null;
}

export interface SaveInput {
  nodeId: number;
  bytes: Buffer;
  by: SavedBy;
  /** When given, the save succeeds only if it holds for the stored checksum (412 otherwise). */
  ifMatch?: IfMatch | null;
  /** The row the caller found and authorized before the save locked it: the save goes on only when the locked
   *  row is still that one, but for what saves change (else `FoundRowChanged`, and nothing is written). */
  found?: NodeRow;
  /** An earlier version replayed by an import: versioned like any write, but no activity line, event,
   *  stylesheet or guard check (the import's last write of the document speaks for all of them). */
  quiet?: boolean;
}

/** What a save changes on its node: a row found before the lock may differ from the locked one in these. */
const SAVE_COLUMNS = new Set([
  'checksum',
  'size',
  'modified_at',
  'saved_by_account_id',
  'saved_by_writer',
  'last_synced_at',
]);

/** The node a save was given (`found`) is not the locked one any more: moved, renamed, deleted, its
 *  visibility or sharing changed. The caller looks it up again; nothing was written. */
export class FoundRowChanged extends Error {
  /** No live document has the found row's id any more. */
  readonly gone: boolean;
  constructor(gone: boolean) {
    super('The document changed between its lookup and its save.');
    this.gone = gone;
  }
}

function stillFound(found: NodeRow, locked: DocumentForWrite | undefined): boolean {
  if (!locked) return false;
  for (const [column, value] of Object.entries(found))
    if (!SAVE_COLUMNS.has(column) && locked[column as keyof NodeRow] !== value) return false;
  return true;
}

export interface SaveResult {
  changed: boolean;
  checksum: string;
  size: number;
  modifiedAt: string;
  /** The version this save made (none when the page was unchanged). */
  version?: { id: number; number: number };
}

/** A save in a transaction of its own (browser, editor, sync, restore), or sharing one commit with the saves
 *  that arrive meanwhile where the database groups them (src/store/writes.ts). */
export async function saveDocument(s: Services, input: SaveInput): Promise<SaveResult> {
  // What needs no lock is worked out before the save joins its document's queue: the saves queued behind
  // another wait for the database only, not for this process's work on them too.
  const content = contentOf(input.bytes);
  return inTransaction(s, (tx, after) => writeContent(s, tx, after, input, content), {
    document: input.nodeId,
    // A lost COMMIT answer: the save took when its version is there (an unchanged save wrote nothing).
    committed: (r) =>
      r.changed ? versionWritten(s.database.db, input.nodeId, r.checksum, r.modifiedAt) : Promise.resolve(true),
  });
}

/** Step 1: the owner's toolbar tag never stays (src/ui/toolbar.ts); then re-indent documents that opt
 *  in with `<html formathtml="true">`; all others keep their exact bytes. Decodes the bytes once: the
 *  text (null when they are not exact UTF-8, which is never re-indented) serves every later step. */
export function normalize(sent: Buffer): { bytes: Buffer; text: string | null } {
  const text = decodeUtf8Exact(sent);
  if (text === null) return { bytes: withoutToolbar(sent), text: null };
  const kept = withoutToolbarText(text);
  // The attribute name is case-insensitive.
  const formatted = /formathtml/i.test(kept) ? formatHtml(kept) : kept;
  return formatted === text ? { bytes: sent, text } : { bytes: Buffer.from(formatted, 'utf8'), text: formatted };
}

/** THE write of a document's HTML, inside the caller's transaction: normalize → lock the row →
 *  compare If-Match (412) → skip when unchanged (SHA-256 against the newest version's) → version +
 *  content + checksum + activity line → queue the stylesheet and the events for after the commit.
 *  Every writer comes through here: saves, creation (a node inserted earlier in the same transaction),
 *  instance copies, imports. */
export function writeDocument(s: Services, tx: Tx, after: AfterCommit, input: SaveInput): Promise<SaveResult> {
  return writeContent(s, tx, after, input, contentOf(input.bytes));
}

/** Steps 1 and 2's inputs: the normalized bytes, their text and SHA-256. */
function contentOf(sent: Buffer): Content {
  const { bytes, text } = normalize(sent);
  return { bytes, text, hash: sha256(bytes) };
}

async function writeContent(
  s: Services,
  tx: Tx,
  after: AfterCommit,
  input: SaveInput,
  content: Content,
): Promise<SaveResult> {
  const { bytes, text } = content;
  const now = s.clock.now().toISOString();
  // Several processes on PostgreSQL: saves of one document queue on its row lock (taken by this read), so
  // the checksum compare below sees the previous winner's commit (one 200, the rest 412).
  const node = await s.database.saves.documentForWrite(tx, input.nodeId);
  if (input.found && !stillFound(input.found, node)) throw new FoundRowChanged(node === undefined);
  if (node?.type !== 'site') throw notFound('No such document.');
  if (!ifMatchHolds(input.ifMatch, node.checksum)) {
    throw conflictError(node.checksum ?? '', node.saved_by_account_id, node.saved_by_writer, input.by);
  }
  const { last } = node;
  if (node.checksum !== null && (await sameAsStored(tx, node.id, last, content))) {
    const same = { checksum: node.checksum, size: bytes.length, modifiedAt: node.modified_at };
    after.push(() =>
      republishIfLost(s, { ...node, type: 'site' }, same, {
        writer: input.by.writer,
        html: textOf(content),
        client: input.by.kind,
      }),
    );
    return { changed: false, ...same };
  }
  // What the guard compares against: the version before this write, and its text when this process has it.
  const memo = s.documents.texts.get(node.id);
  const before = {
    versionId: last?.id ?? null,
    text: last && memo?.hash === last.content_hash ? memo.text : undefined,
  };
  // A guarded write owes a check, recorded with it: it is run even when this process dies or its pool is busy.
  // (An import's replayed versions owe none: its last write of the document speaks for all of them.)
  const check = input.quiet ? null : guardCheckOf(input.by, text, before, now);
  const { sum, versionId, backupNumber } = await writeVersionAndContent(
    s,
    tx,
    node,
    content,
    last,
    input.by,
    now,
    check,
    input.quiet,
  );
  const result = {
    changed: true,
    checksum: sum,
    size: bytes.length,
    modifiedAt: now,
    version: { id: versionId, number: backupNumber },
  };
  if (input.quiet) return result;
  after.push(() => {
    if (check) s.guard.afterWrite({ node, by: input.by, bytes, text, checksum: sum, before, versionId });
    // A browser save over a change made elsewhere may have undone it (never awaited: the answer does not wait).
    if (input.by.kind === 'browser' && last)
      void checkStaleSave(s, node, input.by, last, textOf(content)).catch((err) =>
        console.error('checking a save for an undone change failed:', err),
      );
    return afterContentChange(s, node, content, result, input.by);
  });
  return result;
}

/** Whether the stored content is these bytes: the newest version's SHA-256 says (every content
 *  change writes one); a document without versions (none before versions existed) compares bytes. */
async function sameAsStored(tx: Tx, nodeId: number, last: Newest | undefined, content: Content): Promise<boolean> {
  if (last) return last.content_hash === content.hash;
  const stored = await storedContent(tx, nodeId);
  return stored !== undefined && content.bytes.equals(stored.html);
}

const textOf = (c: Content) => c.text ?? c.bytes.toString('utf8');

/** What follows a committed content change, outside the transaction: the utility stylesheet and the
 *  change events (the owner's sync streams, the document's `saved` lane). */
function afterContentChange(
  s: Services,
  node: SavedNode,
  content: Content,
  result: { checksum: string; size: number; modifiedAt: string },
  by: SavedBy,
): Promise<unknown> {
  s.metrics.saves.inc({ via: by.kind });
  // What this process just wrote is what it serves next.
  s.documents.content.set(node.id, { checksum: result.checksum, bytes: content.bytes });
  const html = textOf(content);
  void s.stylesheets.schedule(node.id, html);
  // The answer waits for the events only while the bus is flowing (src/store/transaction.ts).
  return publishNodeSaved(s, { ...node, type: 'site' }, result, {
    writer: by.writer,
    html,
    client: by.kind,
    activityRecorded: true,
    elsewhere: changedElsewhereBy(by),
  });
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
