// The sync API's use cases: list, read, create, write, rename, move and delete the nodes of one
// scope (a person's or a team's tree). Shapes follow the Hyperclay Local desktop engine, protocols 1
// and 2 (docs/notes/hyperclay-local-sync.md):
// - a node on the wire: {id, type, name, parentId (0 at top level), path (the PARENT folder path, ''
//   at top level), lastSyncedAt, size, modifiedAt, checksum, etag (= checksum), structureVersion};
// - site content travels as text, upload content as base64, both ways;
// - every site content write goes through the save pipeline (saveDocument / createNode), every tree
//   change through src/nodes/tree.ts, so versions, the stylesheet and the events are the same as for
//   any other writer. Uploads are written here (conditional replace) and publish their own events.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Services } from '../services.ts';
import type { DB, NodeType } from '../store/schema.ts';
import { KilnError, badRequest } from '../errors.ts';
import { limits } from '../limits.ts';
import { checksum as checksumOf } from '../core/checksum.ts';
import { isGlobalDocumentName, nodeNameProblem } from '../core/names.ts';
import { broadcastSnapshot } from '../events/publish.ts';
import { saveDocument, writeDocument as writeDocumentIn, type SavedBy } from '../save/pipeline.ts';
import { childPathOf, createIn, deleteNode, getNode, moveNode, renameNode, runWrite, type ChangeOptions, type NodeRow } from '../nodes/tree.ts';
import { documentContent } from '../nodes/serve.ts';
import { insertUpload, replaceUpload, storeBytes, type StoredBytes } from '../uploads/upload.ts';
import type { AfterCommit, Tx } from '../store/transaction.ts';
import { assertCanWrite, type SyncScope } from './scope.ts';
import { analyzeTree, fileVersion, structureVersions, versioned } from './structure.ts';

// ------------------------------------------------------------------ wire shapes

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
 *  moves), or its last content write when a sync key made it; the modification time when never synced. */
function lastSyncedAt(n: WireRow): string {
  const byKey = n.saved_by_writer !== null && n.saved_by_writer.startsWith('key:');
  if (n.last_synced_at === null) return n.modified_at;
  return byKey && n.modified_at > n.last_synced_at ? n.modified_at : n.last_synced_at;
}

/** `lastSyncedAt` computed by the database, for the listing (same rule as above). */
const LAST_SYNCED_SQL = sql<string>`CASE WHEN last_synced_at IS NULL THEN modified_at WHEN saved_by_writer LIKE 'key:%' AND modified_at > last_synced_at THEN modified_at ELSE last_synced_at END`;

export function wireNode(n: WireRow, structureVersion: string): WireNode {
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

const fullPath = (n: { path: string; name: string }) => childPathOf(n);
type RowForVersion = Parameters<typeof versioned>[0];

// ------------------------------------------------------------------ errors the engine reacts to

const NODE_NOT_FOUND = 'No such file or folder (it may have been deleted).';
export const nodeNotFound = () => new KilnError(404, NODE_NOT_FOUND, 'node-not-found');

/** Tree refusals in the codes the desktop engine recognises: any name clash is 409 `name-conflict`
 *  with "already taken" in the message (protocol 1 matches that text); the site-count ceiling is 413
 *  `quota-exceeded` (the engine stops creating for the session); a missing node is `node-not-found`. */
function translated(err: unknown): unknown {
  if (!(err instanceof KilnError)) return err;
  if (err.status === 409 && (err.code === 'name-taken' || err.code === 'name-taken-elsewhere' || err.code === 'name-conflict')) {
    const msg = /already taken/i.test(err.message) ? err.message : `That name is already taken. ${err.message}`;
    return new KilnError(409, msg, 'name-conflict', err.extra);
  }
  if (err.status === 403 && err.code === 'quota-exceeded') return new KilnError(413, err.message, 'quota-exceeded', err.extra);
  if (err.status === 404 && !err.code) return new KilnError(404, err.message, 'node-not-found');
  return err;
}

async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translated(err);
  }
}

// ------------------------------------------------------------------ reading

/** Every node of the scope's account, each folder before what it holds: one query (no ORDER BY: the
 *  tree order comes from the same grouping by parent that the structure versions need). */
export async function listSyncNodes(s: Services, scope: SyncScope): Promise<WireNode[]> {
  // The rows come out in wire shape (aliases, lastSyncedAt computed in SQL): 10,000 nodes make 10,000
  // objects, not twice that, and each gets its etag and version in place.
  const rows = await s.database.db
    .selectFrom('nodes')
    .select(['id', 'type', 'name', 'parent_id as parentId', 'path', LAST_SYNCED_SQL.as('lastSyncedAt'), 'size', 'modified_at as modifiedAt', 'checksum'])
    .where('owner_id', '=', scope.account.id)
    .execute();
  const { versions, ordered } = analyzeTree(rows);
  const out = ordered as Array<(typeof ordered)[number] & { etag?: string | null; structureVersion?: string }>;
  for (const r of out) {
    r.etag = r.checksum;
    r.structureVersion = versions.get(r.id)!;
  }
  return out as WireNode[];
}

/** The structure version of one node (a folder's needs its whole subtree: one query of the owner's tree). */
async function versionOf(db: Services['database']['db'] | Transaction<DB>, row: RowForVersion & { owner_id: number }): Promise<string> {
  const node = versioned(row);
  if (node.type !== 'folder') return fileVersion(node);
  const rows = await db
    .selectFrom('nodes')
    .select(['id', 'parent_id as parentId', 'type', 'path', 'name', 'checksum'])
    .where('owner_id', '=', row.owner_id)
    .execute();
  return structureVersions(rows).get(node.id) ?? fileVersion(node);
}

/** A node of the scope's account, or 404 `node-not-found` (other accounts' nodes look missing). */
export async function scopedNode(s: Services, scope: SyncScope, nodeId: number): Promise<NodeRow> {
  const node = await getNode(s, nodeId);
  if (!node || node.owner_id !== scope.account.id) throw nodeNotFound();
  return node;
}

export interface ContentAnswer {
  success: true;
  nodeId: number;
  nodeType: NodeType;
  name: string;
  path: string;
  content: string;
  modifiedAt: string;
  checksum: string;
  etag: string;
  size: number;
  structureVersion: string;
}

/** A document's HTML (text) or an upload's bytes (base64), with the checksum of exactly those bytes. */
export async function readSyncContent(s: Services, scope: SyncScope, nodeId: number): Promise<ContentAnswer> {
  const node = await scopedNode(s, scope, nodeId);
  let bytes: Buffer;
  let sum: string;
  if (node.type === 'site') {
    const stored = await documentContent(s, node);
    if (!stored) throw nodeNotFound();
    ({ bytes, checksum: sum } = stored);
  } else if (node.type === 'upload') {
    const blob = node.blob_sha256 ? await s.blobs.get(node.blob_sha256) : null;
    if (!blob) throw nodeNotFound();
    bytes = blob;
    sum = checksumOf(blob);
  } else {
    throw badRequest('Folders have no content; list the nodes to see what a folder holds.', 'not-a-file');
  }
  return {
    success: true,
    nodeId: node.id,
    nodeType: node.type,
    name: node.name,
    path: node.path,
    content: node.type === 'upload' ? bytes.toString('base64') : bytes.toString('utf8'),
    modifiedAt: node.modified_at,
    checksum: sum,
    etag: sum,
    size: bytes.length,
    structureVersion: fileVersion(versioned({ ...node, checksum: sum })),
  };
}

// ------------------------------------------------------------------ preconditions

/** A conditional header as sent: absent, `*`, or a tag with quotes and W/ removed. */
export type Precondition = { kind: 'none' } | { kind: 'any' } | { kind: 'tag'; value: string };

export function preconditionOf(header: string | string[] | undefined): Precondition {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v) return { kind: 'none' };
  if (v === '*') return { kind: 'any' };
  return { kind: 'tag', value: v.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') };
}

/** Team writes must be conditional (428 `precondition-required`): a changed file cannot be
 *  overwritten, moved or deleted by a tool that has not seen the change. */
function assertConditional(scope: SyncScope, present: boolean, what: string) {
  if (present || scope.account.kind !== 'team') return;
  throw new KilnError(428, `Team writes must be conditional: send ${what}.`, 'precondition-required');
}

function sizeOf(content: string, type: NodeType): number {
  return type === 'upload' ? Buffer.byteLength(content, 'base64') : Buffer.byteLength(content, 'utf8');
}

/** The bytes a request's `content` stands for (sites: UTF-8 text; uploads: base64). 413 for a
 *  document over 5 MB, before anything is read or written. */
function contentBytes(content: unknown, type: NodeType): Buffer {
  if (typeof content !== 'string') throw badRequest('content must be a string (HTML text for documents, base64 for uploads).', 'invalid-content');
  if (type === 'site') {
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > limits.documentSize) {
      throw new KilnError(413, `Documents are limited to ${limits.documentSize / 1024 / 1024} MB; this one is ${(bytes.length / 1024 / 1024).toFixed(1)} MB.`, 'too-large');
    }
    return bytes;
  }
  if (!/^[A-Za-z0-9+/_\-\s]*={0,2}\s*$/.test(content)) throw badRequest('Upload content must be base64.', 'invalid-content');
  return Buffer.from(content, 'base64');
}

/** The expected-version check of rename, move and delete, run inside their transaction. A stale
 *  `expectedVersion` is 409 `node-changed`; an `If-Match` must name the current structure version
 *  or (files) the current etag, else 412. Both leave everything unchanged. */
function expectVersion(s: Services, expected: string | null, ifMatch: Precondition): ChangeOptions['expect'] {
  if (expected === null && ifMatch.kind !== 'tag') return undefined;
  return async (trx, node) => {
    // Hold the node while deciding, so two conditional changes cannot both pass.
    await s.database.lock.row(trx, 'nodes', node.id);
    const current = await versionOf(trx, node);
    if (expected !== null && expected !== current) {
      throw new KilnError(409, `"${node.name}" changed on the server since you last listed it; refresh it and try again.`, 'node-changed', {
        structureVersion: current,
        etag: node.checksum,
      });
    }
    if (ifMatch.kind === 'tag' && ifMatch.value !== current && ifMatch.value !== node.checksum) {
      throw new KilnError(412, `"${node.name}" changed on the server since you last listed it.`, 'conflict', { etag: node.checksum, structureVersion: current });
    }
  };
}

async function markSynced(db: Kysely<DB>, ids: number[], now: string) {
  if (ids.length === 0) return;
  await db.updateTable('nodes').set({ last_synced_at: now }).where('id', 'in', ids).execute();
}

async function freshWireNode(s: Services, id: number): Promise<WireNode> {
  const row = await s.database.db.selectFrom('nodes').select([...WIRE_COLUMNS, 'owner_id']).where('id', '=', id).executeTakeFirst();
  if (!row) throw nodeNotFound();
  return wireNode(row, await versionOf(s.database.db, row));
}

const by = (scope: SyncScope): SavedBy => ({ kind: 'sync', accountId: scope.actor.accountId, writer: scope.actor.writer });

// ------------------------------------------------------------------ writing content

export interface WriteInput {
  content: unknown;
  ifMatch: Precondition;
  snapshotHtml?: unknown;
  senderId?: unknown;
}

export interface WriteAnswer {
  success: true;
  nodeId: number;
  checksum: string;
  etag: string;
  size: number;
  modifiedAt: string;
  structureVersion: string;
  changed: boolean;
}

/** Writes the content of a document or upload. Rules: an `If-Match` equal to the stored checksum
 *  succeeds, another answers 412 {code:'conflict', etag, changedBy?} and changes nothing; without
 *  `If-Match` the content is replaced (team scopes: 428). `snapshotHtml` + `senderId` also go to the
 *  document's live lane and the owner's sync streams as a `live-sync` frame. */
export async function writeSyncContent(s: Services, scope: SyncScope, nodeId: number, input: WriteInput): Promise<WriteAnswer> {
  const node = await scopedNode(s, scope, nodeId);
  if (node.type === 'folder') throw badRequest('Folders have no content.', 'not-a-file');
  assertCanWrite(scope);
  assertConditional(scope, input.ifMatch.kind !== 'none', 'If-Match with the etag your copy is based on');
  const bytes = contentBytes(input.content, node.type);
  const answer = node.type === 'site' ? await writeDocument(s, scope, node, bytes, input.ifMatch) : await writeUpload(s, scope, node, bytes, input.ifMatch);
  if (node.type === 'site' && typeof input.snapshotHtml === 'string' && typeof input.senderId === 'string' && input.senderId !== '') {
    // Not awaited: a write never waits on the bus.
    broadcastSnapshot(s, { node, html: input.snapshotHtml, sender: input.senderId, toSyncStreams: true }).catch((err) =>
      console.error('publishing a live-sync snapshot failed:', err),
    );
  }
  return answer;
}

async function writeDocument(s: Services, scope: SyncScope, node: NodeRow, bytes: Buffer, ifMatch: Precondition): Promise<WriteAnswer> {
  const result = await run(() => saveDocument(s, { nodeId: node.id, bytes, by: by(scope), ifMatch: tagOf(ifMatch) }));
  return {
    success: true,
    nodeId: node.id,
    checksum: result.checksum,
    etag: result.checksum,
    size: result.size,
    modifiedAt: result.modifiedAt,
    structureVersion: fileVersion(versioned({ ...node, checksum: result.checksum })),
    changed: result.changed,
  };
}

/** Replaces an upload's bytes through the one upload writer (If-Match in the statement). */
async function writeUpload(s: Services, scope: SyncScope, node: NodeRow, bytes: Buffer, ifMatch: Precondition): Promise<WriteAnswer> {
  const { changed, node: n } = await run(() =>
    replaceUpload(s, { node, plan: scope.account.plan, bytes, by: uploadWriter(scope), ifMatch: tagOf(ifMatch) }),
  );
  return {
    success: true,
    nodeId: n.id,
    checksum: n.checksum!,
    etag: n.checksum!,
    size: n.size,
    modifiedAt: n.modified_at,
    structureVersion: fileVersion(versioned(n)),
    changed,
  };
}

const tagOf = (p: Precondition): string | null => (p.kind === 'tag' ? p.value : null);
const uploadWriter = (scope: SyncScope) => ({ kind: 'sync' as const, accountId: scope.actor.accountId, writer: scope.actor.writer });

// ------------------------------------------------------------------ creating

export interface CreateInput {
  type: unknown;
  name: unknown;
  parentId: unknown;
  content?: unknown;
  ifMatch: Precondition;
  ifNoneMatch: Precondition;
}

/** `parentId` as the engine sends it: a node id, or 0 / 'root' / null for the top level. */
export function parentIdOf(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 'root' || v === 0 || v === '0') return 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest('parentId must be a folder id (0 or "root" for the top level).', 'invalid-parent');
  return n;
}

/** A folder of the scope's account (0 = top level → null). */
async function scopedFolder(db: Kysely<DB>, scope: SyncScope, id: number): Promise<NodeRow | null> {
  if (id === 0) return null;
  const folder = await db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!folder || folder.owner_id !== scope.account.id) throw nodeNotFound();
  if (folder.type !== 'folder') throw badRequest(`"${folder.name}" is not a folder.`, 'invalid-parent');
  return folder;
}

function nameTaken(name: string, detail: string): KilnError {
  return new KilnError(409, `The name "${name}" is already taken${detail}.`, 'name-conflict');
}

/** Creates a node, or reuses the account's own node of that name (write rule 3):
 *  - `name` may be a path (`folder/sub/name.html`): missing folders are created, existing ones reused;
 *  - a document name owned by another account answers 409 `name-conflict` ("already taken");
 *  - the account's own document of that name (in any folder, where it stays), or its own folder/upload
 *    of that name in the target folder, is reused: the content (when sent) is written to it through the
 *    same rules as PUT, and the answer is 200 instead of 201 (a team's file with other bytes and no
 *    If-Match is 409 `name-conflict` instead: team writes are never blind);
 *  - two creators of one name at once: one creates, the other reuses;
 *  - `If-None-Match: *` answers 412 when the name exists (nothing is written).
 *  Answers `{node, created}`. */
export async function createSyncNode(s: Services, scope: SyncScope, input: CreateInput): Promise<{ node: WireNode; created: boolean }> {
  const type = input.type;
  if (type !== 'site' && type !== 'folder' && type !== 'upload') throw badRequest('type must be "site", "upload" or "folder".', 'invalid-type');
  if (typeof input.name !== 'string' || input.name.trim() === '') throw badRequest('name is required.', 'invalid-name');
  assertCanWrite(scope);
  const segments = input.name.replace(/^\/+|\/+$/g, '').split('/').map((p) => p.normalize('NFC'));
  for (const [i, seg] of segments.entries()) {
    const problem = nodeNameProblem(seg, i === segments.length - 1 ? type : 'folder');
    if (problem) throw badRequest(segments.length > 1 ? `${problem} (in "${seg}")` : problem, 'invalid-name');
  }
  const bytes = type === 'folder' || input.content === undefined || input.content === null ? null : contentBytes(input.content, type);
  // An upload's bytes go to the blob store before the transaction (durable first, and no file I/O
  // while the transaction holds the database).
  const stored = type === 'upload' && bytes ? await storeBytes(s, scope.account.plan, bytes) : null;
  return run(async () => {
    // Two creators of one name at once: the loser of the unique index tries again and reuses.
    for (let attempt = 0; ; attempt++) {
      try {
        const made = await runWrite(s, (tx, after) => createOnce(s, { tx, after }, scope, type, segments, bytes, stored, input));
        return { node: await freshWireNode(s, made.id), created: made.created };
      } catch (err) {
        if (attempt < 3 && err instanceof KilnError && err.status === 409 && err.code === 'name-taken') continue;
        throw err;
      }
    }
  });
}

/** The create, in one transaction: the folders of the path, then the leaf (new or reused). A refusal
 *  anywhere leaves nothing behind. */
async function createOnce(
  s: Services,
  t: { tx: Tx; after: AfterCommit },
  scope: SyncScope,
  type: NodeType,
  segments: string[],
  bytes: Buffer | null,
  stored: StoredBytes | null,
  input: CreateInput,
): Promise<{ id: number; created: boolean }> {
  const { tx, after } = t;
  const leaf = segments[segments.length - 1];
  const writer = scope.actor.writer;
  const now = s.clock.now().toISOString();
  const touched: number[] = [];
  // The folders of the path: reuse what exists, create what is missing.
  let parent = await scopedFolder(tx, scope, parentIdOf(input.parentId));
  for (const folderName of segments.slice(0, -1)) {
    const existing = await sibling(tx, scope.account.id, parent?.id ?? 0, folderName);
    if (existing && existing.type !== 'folder') throw nameTaken(folderName, ` by a ${existing.type === 'site' ? 'document' : 'file'} in this folder`);
    if (existing) parent = existing;
    else {
      parent = await createIn(s, tx, scope.actor.accountId, { ownerId: scope.account.id, parentId: parent?.id ?? 0, type: 'folder', name: folderName, writer }, now, after);
      touched.push(parent.id);
    }
  }
  const parentId = parent?.id ?? 0;

  // Rule 3: the leaf name.
  let reuse: NodeRow | undefined;
  if (type === 'site' && isGlobalDocumentName(leaf)) {
    const site = await tx
      .selectFrom('nodes')
      .selectAll()
      .where('name_key', '=', leaf.toLowerCase())
      .where(sql.ref('type'), '=', sql.lit('site'))
      .executeTakeFirst();
    if (site && site.owner_id !== scope.account.id) throw nameTaken(leaf, ' by another account; document names are unique across this Kiln');
    reuse = site;
  }
  const same = await sibling(tx, scope.account.id, parentId, leaf);
  if (same && same.type !== type) throw nameTaken(leaf, ` by a ${same.type === 'site' ? 'document' : same.type === 'folder' ? 'folder' : 'file'} in this folder`);
  reuse ??= same;

  if (reuse) {
    if (input.ifNoneMatch.kind !== 'none') {
      throw new KilnError(412, `"${reuse.name}" already exists${reuse.path ? ` in "${reuse.path}"` : ''}.`, 'conflict', { etag: reuse.checksum });
    }
    if (bytes && type !== 'folder') {
      // A team's file is never overwritten blindly: a create that names one with other bytes and no
      // If-Match is a name conflict (the engine records it; nothing is lost). Same bytes: a no-op.
      if (scope.account.kind === 'team' && input.ifMatch.kind === 'none' && checksumOf(bytes) !== reuse.checksum) {
        throw nameTaken(reuse.name, ' in this team by a file with other content (send If-Match to replace it)');
      }
      if (type === 'site') await writeDocumentIn(s, tx, after, { nodeId: reuse.id, bytes, by: by(scope), ifMatch: tagOf(input.ifMatch) });
      else await replaceUpload(s, { node: reuse, plan: scope.account.plan, bytes: stored!, by: uploadWriter(scope), ifMatch: tagOf(input.ifMatch) }, t);
    }
    await markSynced(tx, [...touched, reuse.id], now);
    return { id: reuse.id, created: false };
  }

  const node =
    type === 'upload'
      ? await insertUpload(
          s,
          { ownerId: scope.account.id, parentId, parentPath: childPathOf(parent), name: leaf, stored: stored ?? (await storeBytes(s, scope.account.plan, Buffer.alloc(0))), by: uploadWriter(scope), ifTaken: 'refuse' },
          t,
        )
      : await createIn(s, tx, scope.actor.accountId, { ownerId: scope.account.id, parentId, type, name: leaf, html: type === 'site' && bytes ? bytes : undefined, writer }, now, after);
  touched.push(node.id);
  await markSynced(tx, touched, now);
  return { id: node.id, created: true };
}

/** The account's node of that name in a folder (names are case-insensitive), any type. */
function sibling(db: Kysely<DB>, ownerId: number, parentId: number, name: string) {
  return db
    .selectFrom('nodes')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .where('name_key', '=', name.toLowerCase())
    .executeTakeFirst();
}

// ------------------------------------------------------------------ structure

export interface StructureInput {
  /** Protocol 2's precondition: the node's `structureVersion` as last listed. */
  expectedVersion?: unknown;
  ifMatch: Precondition;
}

function expectedOf(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw badRequest('expectedVersion must be a string.', 'invalid-version');
  return v;
}

function structureOptions(s: Services, scope: SyncScope, input: StructureInput): ChangeOptions {
  const expected = expectedOf(input.expectedVersion);
  assertConditional(scope, expected !== null || input.ifMatch.kind !== 'none', 'expectedVersion (the structureVersion from the listing) or If-Match');
  return { writer: scope.actor.writer, expect: expectVersion(s, expected, input.ifMatch) };
}

/** Renames a node in its folder; a folder's descendants get their new paths. */
export async function renameSyncNode(s: Services, scope: SyncScope, nodeId: number, input: StructureInput & { newName: unknown }) {
  const node = await scopedNode(s, scope, nodeId);
  assertCanWrite(scope);
  if (typeof input.newName !== 'string' || input.newName === '') throw badRequest('newName is required.', 'invalid-name');
  const opts = structureOptions(s, scope, input);
  const renamed = await run(() => renameNode(s, scope.actor.accountId, node.id, input.newName as string, opts));
  await markSynced(s.database.db, [renamed.id], s.clock.now().toISOString());
  const wire = await freshWireNode(s, renamed.id);
  return { success: true as const, nodeId: renamed.id, oldName: node.name, newName: renamed.name, node: wire, structureVersion: wire.structureVersion };
}

/** Moves a node to another folder (0 / 'root' = top level), optionally renaming it in the same step. */
export async function moveSyncNode(s: Services, scope: SyncScope, nodeId: number, input: StructureInput & { targetParentId: unknown; newName?: unknown }) {
  const node = await scopedNode(s, scope, nodeId);
  assertCanWrite(scope);
  const target = parentIdOf(input.targetParentId);
  await scopedFolder(s.database.db, scope, target);
  if (input.newName !== undefined && input.newName !== null && typeof input.newName !== 'string') throw badRequest('newName must be a string.', 'invalid-name');
  const opts = structureOptions(s, scope, input);
  const moved = await run(() => moveNode(s, scope.actor.accountId, node.id, target, (input.newName as string | null | undefined) ?? null, opts));
  await markSynced(s.database.db, [moved.id], s.clock.now().toISOString());
  const wire = await freshWireNode(s, moved.id);
  return {
    success: true as const,
    nodeId: moved.id,
    fromPath: fullPath(node),
    toPath: fullPath(moved),
    oldName: node.name,
    newName: moved.name,
    node: wire,
    structureVersion: wire.structureVersion,
  };
}

/** Deletes a node; a folder that holds anything needs `cascade` (400 `folder-not-empty` otherwise). */
export async function deleteSyncNode(s: Services, scope: SyncScope, nodeId: number, input: StructureInput & { cascade: boolean }) {
  const node = await scopedNode(s, scope, nodeId);
  const opts = structureOptions(s, scope, input);
  const gone = await run(() => deleteNode(s, scope.actor.accountId, node.id, { cascade: input.cascade, ...opts }));
  return { success: true as const, nodeId: node.id, type: node.type, deleted: gone.length };
}
