// The sync API's wire: node shapes as the Hyperclay Local desktop engine reads them (protocols 1 and
// 2, docs/notes/hyperclay-local-sync.md), the errors it reacts to, preconditions (If-Match,
// If-None-Match), content encodings (sites as text, uploads as base64), and the scope's own nodes.
// - a node on the wire: {id, type, name, parentId (0 at top level), path (the PARENT folder path, ''
//   at top level), lastSyncedAt, size, modifiedAt, checksum, etag (= checksum), structureVersion}.
import { assertDocumentBytes } from '../save/root-html.ts';
import type { Services } from '../services.ts';
import type { Executor, NodeType, NodeRow } from '../store/schema.ts';
import type { Action } from '../access/table.ts';
import { KilnError, badRequest, forbidden } from '../errors.ts';
import { limits } from '../limits.ts';
import type { SavedBy } from '../save/saved.ts';
import { childPathOf } from '../nodes/find.ts';
import type { SyncCtx, SyncScope } from './scope.ts';
import { fileVersion, structureVersions, versioned } from './structure.ts';
import { markSynced, nodeById, nodeColumns, structureRowsOf } from '../store/nodes.ts';

export interface WireNode {
  id: number;
  type: NodeType;
  name: string;
  parentId: number;
  path: string;
  lastSyncedAt: string;
  size: number;
  modifiedAt: string;
  checksum: string | null;
  etag: string | null;
  structureVersion: string;
}

/** The columns a wire node is made of. */
const WIRE_COLUMNS = [
  'id',
  'parent_id',
  'type',
  'name',
  'path',
  'size',
  'modified_at',
  'last_synced_at',
  'checksum',
  'saved_by_writer',
] as const;
type WireRow = Pick<NodeRow, (typeof WIRE_COLUMNS)[number]>;

/** When the node was last written through the sync API: its `last_synced_at` (sync creates, renames,
 *  moves), or its last content write when a sync key made it; the modification time when never synced.
 *  The listing computes the same in SQL (src/store/nodes.ts LAST_SYNCED_SQL). */
function lastSyncedAt(n: WireRow): string {
  const byKey = n.saved_by_writer?.startsWith('key:');
  if (n.last_synced_at === null) return n.modified_at;
  return byKey && n.modified_at > n.last_synced_at ? n.modified_at : n.last_synced_at;
}

function wireNode(n: WireRow, structureVersion: string): WireNode {
  return {
    id: n.id,
    type: n.type,
    name: n.name,
    parentId: n.parent_id,
    path: n.path,
    lastSyncedAt: lastSyncedAt(n),
    size: n.size,
    modifiedAt: n.modified_at,
    checksum: n.checksum,
    etag: n.checksum,
    structureVersion,
  };
}

export const fullPath = (n: { path: string; name: string }) => childPathOf(n);
type RowForVersion = Parameters<typeof versioned>[0];

// ------------------------------------------------------------------ errors the engine reacts to

const NODE_NOT_FOUND = 'No such file or folder (it may have been deleted).';
export const nodeNotFound = () => new KilnError(404, NODE_NOT_FOUND, 'node-not-found');

/** Tree refusals in the codes the desktop engine recognises: any name clash is 409 `name-conflict`
 *  with "already taken" in the message (protocol 1 matches that text); the site-count ceiling is 413
 *  `quota-exceeded` (the engine stops creating for the session); a missing node is `node-not-found`. */
function translated(err: unknown): unknown {
  if (!(err instanceof KilnError)) return err;
  if (err.status === 409 && (err.code === 'name-taken-elsewhere' || err.code === 'name-conflict')) {
    const msg = /already taken/i.test(err.message) ? err.message : `That name is already taken. ${err.message}`;
    return new KilnError(409, msg, 'name-conflict', err.extra);
  }
  if (err.status === 403 && err.code === 'quota-exceeded')
    return new KilnError(413, err.message, 'quota-exceeded', err.extra);
  if (err.status === 404 && (!err.code || err.code === 'not-found'))
    return new KilnError(404, err.message, 'node-not-found');
  return err;
}

export async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translated(err);
  }
}

/** The structure version of one node (a folder's needs its whole subtree: one query of the owner's tree). */
export async function versionOf(db: Executor, row: RowForVersion & { owner_id: number }): Promise<string> {
  const node = versioned(row);
  if (node.type !== 'folder') return fileVersion(node);
  const rows = await structureRowsOf(db, row.owner_id);
  return structureVersions(rows).get(node.id) ?? fileVersion(node);
}

/** The table's 404 (a node the caller may not see) in the words the desktop engine knows. */
async function orMissing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof KilnError && err.status === 404 ? nodeNotFound() : err;
  }
}

/** A node of the scope's account that the caller may do `action` on, through `ctx.nodes` (loaded as the
 *  caller sees it, then judged for the action: the table's refusal is the answer), or 404 `node-not-found`.
 *  The ctx reaches the scope's tree only (src/sync/scope.ts `syncContext`): another account's node (another
 *  person's, the key holder's own on a team base) is missing to it. */
export async function scopedNode(ctx: SyncCtx<'nodes'>, nodeId: number, action: Action): Promise<NodeRow> {
  const node = await orMissing(() => ctx.nodes.open(nodeId, 'view'));
  return action === 'view' ? node : ctx.nodes.check(node, action);
}

/** A folder of the scope's account (0 = top level → null; 403 `key-scope` for a folder's agent key), read in the
 *  writer's transaction `tx`. */
export async function scopedFolder(ctx: SyncCtx<'nodes'>, tx: Executor, id: number): Promise<NodeRow | null> {
  if (id === 0) {
    // A folder's agent key adds nothing to the top level, nor moves anything there: it is outside the folder.
    const folder = ctx.sync.narrow?.folder;
    if (folder) throw forbidden(`This agent key reaches only the folder "${folder}".`, 'key-scope');
    return null;
  }
  const row = await nodeById(tx, id);
  if (!row) throw nodeNotFound();
  const folder = await orMissing(() => ctx.nodes.check(row, 'view'));
  if (folder.type !== 'folder') throw badRequest(`"${folder.name}" is not a folder.`, 'invalid-parent');
  return folder;
}

// ------------------------------------------------------------------ preconditions

/** An If-None-Match as sent: absent, `*`, or a tag with quotes and W/ removed (a create only asks
 *  whether one is there). If-Match is read by `parseIfMatch` (src/core/conditional.ts), as every route does. */
export type Precondition = { kind: 'none' } | { kind: 'any' } | { kind: 'tag'; value: string };

export function preconditionOf(header: string | string[] | undefined): Precondition {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v) return { kind: 'none' };
  if (v === '*') return { kind: 'any' };
  return { kind: 'tag', value: v.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') };
}

/** Team writes must be conditional (428 `precondition-required`): a changed file cannot be
 *  overwritten, moved or deleted by a tool that has not seen the change. */
export function assertConditional(scope: SyncScope, present: boolean, what: string) {
  if (present || scope.account.kind !== 'team') return;
  throw new KilnError(428, `Team writes must be conditional: send ${what}.`, 'precondition-required');
}

export function sizeOf(content: string, type: NodeType): number {
  return type === 'upload' ? Buffer.byteLength(content, 'base64') : Buffer.byteLength(content, 'utf8');
}

/** The bytes a request's `content` stands for (sites: UTF-8 text; uploads: base64). 413 for a
 *  document over 5 MB, before anything is read or written. */
export function contentBytes(content: string, type: NodeType): Buffer {
  if (type === 'site') {
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > limits.documentSize) {
      throw new KilnError(
        413,
        `Documents are limited to ${limits.documentSize / 1024 / 1024} MB; this one is ${(bytes.length / 1024 / 1024).toFixed(1)} MB.`,
        'too-large',
      );
    }
    // The same rule as a browser save (`/_/save`).
    assertDocumentBytes(bytes);
    return bytes;
  }
  if (!/^[A-Za-z0-9+/_\-\s]*={0,2}\s*$/.test(content))
    throw badRequest('Upload content must be base64.', 'invalid-content');
  return Buffer.from(content, 'base64');
}

/** Records that sync clients have these nodes (the store's). */
export { markSynced };

export async function freshWireNode(s: Pick<Services, 'database'>, id: number): Promise<WireNode> {
  const row = await nodeColumns(s.database.db, id, [...WIRE_COLUMNS, 'owner_id'] as const);
  if (!row) throw nodeNotFound();
  return wireNode(row, await versionOf(s.database.db, row));
}

export const by = (scope: SyncScope): SavedBy => ({
  kind: 'sync',
  accountId: scope.actor.accountId,
  writer: scope.actor.writer,
});

export const uploadWriter = (scope: SyncScope) => ({
  kind: 'sync' as const,
  accountId: scope.actor.accountId,
  writer: scope.actor.writer,
});
