// The nodes store: node rows read and written, each function taking an executor (the database, or the
// transaction a write runs in). Names compare by `name_key` (lower case), as the unique indexes do. The
// rules (names, depth, quotas, who may) live in src/nodes/tree.ts and the other use cases.
import {
  sql,
  type CompiledQuery,
  type RawBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  type Updateable,
} from 'kysely';
import type { DB, NodesTable } from './schema.ts';
import { SIBLING_UNIQUE_NAMES } from '../core/names.ts';
import { deferredContent } from './group-state.ts';
import { applySplice } from '../core/splice.ts';

type NodeRow = Selectable<NodesTable>;

/** One node by id, or undefined (ids that cannot exist are not looked up). */
export function nodeById(db: Kysely<DB>, id: number): Promise<NodeRow | undefined> {
  if (!Number.isSafeInteger(id) || id <= 0) return Promise.resolve(undefined);
  return db.selectFrom('nodes').selectAll().where('id', '=', id).where('trashed_at', 'is', null).executeTakeFirst();
}

/** The owner's node of that name directly in a folder (0 = top level), any type. */
export function childNamed(
  db: Kysely<DB>,
  ownerId: number,
  parentId: number,
  name: string,
): Promise<NodeRow | undefined> {
  return db
    .selectFrom('nodes')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .where('name_key', '=', name.toLowerCase())
    .where('trashed_at', 'is', null)
    .executeTakeFirst();
}

/** The scope a document name of `ownerId` is unique in, as SQL: 0 (across this Kiln, the default) or the
 *  owner's id while the instance setting `document-names` is `account` (src/admin/admin.ts). Read in the
 *  same statement as the row it checks or writes, so a name and the mode it was checked under never part. */
export function nameScopeOf(ownerId: number): RawBuilder<number> {
  return sql<number>`(case when exists (select 1 from instance_settings where name = 'document-names' and value = 'account') then ${ownerId} else 0 end)`;
}

/** Document names used by more than one account (live documents, the names unique beyond a folder),
 *  with those accounts' ids: what stands in the way of names unique across this Kiln. */
export async function namesSharedByAccounts(db: Kysely<DB>, limit: number) {
  const rows = await db
    .selectFrom('nodes')
    .select(['name_key', 'owner_id'])
    .where(sql.ref('type'), '=', sql.lit('site'))
    .where('trashed_at', 'is', null)
    .where('name_key', 'not in', [...SIBLING_UNIQUE_NAMES])
    .where(
      'name_key',
      'in',
      db
        .selectFrom('nodes')
        .select('name_key')
        .where(sql.ref('type'), '=', sql.lit('site'))
        .where('trashed_at', 'is', null)
        .groupBy('name_key')
        .having((eb) => eb.fn.count('owner_id').distinct(), '>', 1),
    )
    .orderBy('name_key')
    .orderBy('owner_id')
    .execute();
  const byName = new Map<string, number[]>();
  for (const r of rows) byName.set(r.name_key, [...(byName.get(r.name_key) ?? []), r.owner_id]);
  return { total: byName.size, names: [...byName].slice(0, limit).map(([name, owners]) => ({ name, owners })) };
}

/** Puts every document's name in the scope of the mode (0, or its owner's id), trashed ones too: the
 *  unique index refuses it when two accounts' live documents share a name and the mode is `instance`. */
export async function rescopeDocumentNames(db: Kysely<DB>, mode: 'instance' | 'account') {
  await db
    .updateTable('nodes')
    .set({ name_scope: mode === 'account' ? sql.ref('owner_id') : 0 })
    .where('type', '=', 'site')
    .execute();
}

/** The owner's live nodes with this name in any folder. This runs on every document GET (by path): the
 *  query is compiled once per database and reused; the (owner, name) index answers it (migration 018). */
const ownerNameLookups = new WeakMap<Kysely<DB>, CompiledQuery<NodeRow>>();
export async function ownerNodesNamed(db: Kysely<DB>, ownerId: number, name: string): Promise<NodeRow[]> {
  let compiled = ownerNameLookups.get(db);
  if (!compiled) {
    compiled = db
      .selectFrom('nodes')
      .selectAll()
      .where('name_key', '=', '')
      .where('owner_id', '=', 0)
      .where('trashed_at', 'is', null)
      .compile();
    ownerNameLookups.set(db, compiled);
  }
  const result = await db.executeQuery<NodeRow>({ ...compiled, parameters: [name.toLowerCase(), ownerId] });
  return result.rows;
}

/** Every node of an owner; `ordered`: by path, then name (folders before what they hold). */
export function nodesOf(db: Kysely<DB>, ownerId: number, opts: { ordered?: boolean } = {}): Promise<NodeRow[]> {
  let q = db.selectFrom('nodes').selectAll().where('owner_id', '=', ownerId).where('trashed_at', 'is', null);
  if (opts.ordered) q = q.orderBy('path').orderBy('name_key').orderBy('id');
  return q.execute();
}

/** A sibling with this name in a folder, other than `exceptId`. */
export function siblingNamed(db: Kysely<DB>, ownerId: number, parentId: number, name: string, exceptId?: number) {
  let q = db
    .selectFrom('nodes')
    .select(['id', 'type', 'name'])
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .where('name_key', '=', name.toLowerCase())
    .where('trashed_at', 'is', null);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

/** A live document, other than `exceptId`, whose name clashes with `name` for a document of `ownerId`:
 *  any account's while names are unique across this Kiln, the owner's own while they are per account. */
export function siteNameClash(db: Kysely<DB>, ownerId: number, name: string, exceptId?: number) {
  let q = db
    .selectFrom('nodes')
    .selectAll()
    .where('name_key', '=', name.toLowerCase())
    .where(sql.ref('type'), '=', sql.lit('site'))
    .where('trashed_at', 'is', null)
    .where('name_scope', '=', nameScopeOf(ownerId));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

/** Whatever is put into a private folder is private: a collection's `records/` (src/collections/) is one,
 *  and what a form, a sync client, an upload, a move or a restore puts there must never be public. The
 *  one rule for every way a node gets a parent: the visibility it would have, or `private` when its new
 *  parent folder is private. */
function visibilityUnder(parentId: number, otherwise: RawBuilder<unknown>) {
  return sql<
    'public' | 'private'
  >`case when exists (select 1 from nodes p where p.id = ${parentId} and p.visibility = 'private') then 'private' else ${otherwise} end`;
}

/** The live document whose share token has this SHA-256 (sharing on or off), or undefined. */
export function sharedNodeByToken(db: Kysely<DB>, tokenHash: string): Promise<NodeRow | undefined> {
  return db
    .selectFrom('nodes')
    .selectAll()
    .where('share_token', '=', tokenHash)
    .where('trashed_at', 'is', null)
    .executeTakeFirst();
}

export function insertNode(db: Kysely<DB>, row: Insertable<NodesTable>): Promise<NodeRow> {
  const scoped = { ...row, name_scope: nameScopeOf(row.owner_id) };
  const values = row.parent_id
    ? { ...scoped, visibility: visibilityUnder(row.parent_id, sql`${row.visibility ?? 'public'}`) }
    : scoped;
  return db.insertInto('nodes').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateNode(db: Kysely<DB>, id: number, set: Updateable<NodesTable>): Promise<NodeRow> {
  const values = set.parent_id
    ? {
        ...set,
        visibility: visibilityUnder(
          set.parent_id,
          set.visibility ? sql`${set.visibility}` : sql.ref('nodes.visibility'),
        ),
      }
    : set;
  return db.updateTable('nodes').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Makes a folder and everything below it private (a collection's `records/`); returns the nodes that were
 *  public. Level by level: folders nest at most 5 deep. */
export async function makeSubtreePrivate(db: Kysely<DB>, folderId: number): Promise<NodeRow[]> {
  const changed: NodeRow[] = [];
  for (let level = [folderId]; level.length > 0; ) {
    changed.push(
      ...(await db
        .updateTable('nodes')
        .set({ visibility: 'private' })
        .where('id', 'in', level)
        .where('visibility', '!=', 'private')
        .returningAll()
        .execute()),
    );
    level = (await db.selectFrom('nodes').select('id').where('parent_id', 'in', level).execute()).map((n) => n.id);
  }
  return changed;
}

/** Deletes nodes by id (their content and versions go with them: foreign keys cascade). */
export async function deleteNodes(db: Kysely<DB>, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .deleteFrom('nodes')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
}

/** The owner's folders: id, parent and name (for rewriting paths below a moved folder). */
export function foldersOf(db: Kysely<DB>, ownerId: number) {
  return db
    .selectFrom('nodes')
    .select(['id', 'parent_id', 'name'])
    .where('owner_id', '=', ownerId)
    .where('type', '=', 'folder')
    .where('trashed_at', 'is', null)
    .execute();
}

/** Gives every child of a folder its path. */
export async function setChildrenPath(db: Kysely<DB>, ownerId: number, parentId: number, path: string): Promise<void> {
  await db
    .updateTable('nodes')
    .set({ path })
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .where('trashed_at', 'is', null)
    .execute();
}

// ------------------------------------------------------------------ the trash

/** Puts nodes in the trash: `root` (what was deleted) and what it held. */
export async function trashNodes(db: Kysely<DB>, root: NodeRow, ids: number[], now: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable('nodes')
      .set({ trashed_at: now, trash_root: root.id })
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
  await db.updateTable('nodes').set({ trashed_parent_id: root.parent_id }).where('id', '=', root.id).execute();
}

/** What an owner deleted (one row per deletion), newest first, with how many items each took along. */
export function trashRootsOf(db: Kysely<DB>, ownerId: number) {
  return db
    .selectFrom('nodes as r')
    .selectAll('r')
    .select((eb) =>
      eb
        .selectFrom('nodes as c')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('c.trash_root', '=', 'r.id')
        .as('items'),
    )
    .where('r.owner_id', '=', ownerId)
    .where('r.trashed_at', 'is not', null)
    .whereRef('r.trash_root', '=', 'r.id')
    .orderBy('r.trashed_at', 'desc')
    .orderBy('r.id', 'desc')
    .execute();
}

/** A deletion in the trash and everything it took along (the root first). */
export async function trashedWith(db: Kysely<DB>, rootId: number): Promise<NodeRow[]> {
  if (!Number.isSafeInteger(rootId) || rootId <= 0) return [];
  const rows = await db
    .selectFrom('nodes')
    .selectAll()
    .where('trash_root', '=', rootId)
    .where('trashed_at', 'is not', null)
    .execute();
  return rows.sort((a, b) => (a.id === rootId ? -1 : b.id === rootId ? 1 : a.path.length - b.path.length));
}

/** Takes nodes out of the trash (the caller gives the root its place). */
export async function untrashNodes(db: Kysely<DB>, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable('nodes')
      .set({ trashed_at: null, trash_root: null, trashed_parent_id: null })
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
}

/** Deletions that have been in the trash since before `before` (ISO time). */
export function trashRootsBefore(db: Kysely<DB>, before: string, limit = 500) {
  return db
    .selectFrom('nodes')
    .select(['id', 'owner_id'])
    .where('trashed_at', '<', before)
    .whereRef('trash_root', '=', 'id')
    .limit(limit)
    .execute();
}

// ------------------------------------------------------------------ old addresses

/** Remembers that `fromPath` (an old path of the node) leads to the node until `expiresAt`; a newer
 *  redirect from the same path replaces an older one. */
export async function rememberRedirect(
  db: Kysely<DB>,
  r: { ownerId: number; fromPath: string; nodeId: number; expiresAt: string },
): Promise<void> {
  const from_key = r.fromPath.toLowerCase();
  await db.deleteFrom('redirects').where('owner_id', '=', r.ownerId).where('from_key', '=', from_key).execute();
  await db
    .insertInto('redirects')
    .values({ owner_id: r.ownerId, from_key, node_id: r.nodeId, expires_at: r.expiresAt })
    .execute();
}

/** A path a live node now holds redirects nowhere. */
export async function forgetRedirect(db: Kysely<DB>, ownerId: number, path: string): Promise<void> {
  await db.deleteFrom('redirects').where('owner_id', '=', ownerId).where('from_key', '=', path.toLowerCase()).execute();
}

/** The live node an old path leads to, or undefined. */
export function redirectTarget(db: Kysely<DB>, ownerId: number, path: string, now: string) {
  return db
    .selectFrom('redirects')
    .innerJoin('nodes', 'nodes.id', 'redirects.node_id')
    .selectAll('nodes')
    .where('redirects.owner_id', '=', ownerId)
    .where('redirects.from_key', '=', path.toLowerCase())
    .where('redirects.expires_at', '>', now)
    .where('nodes.trashed_at', 'is', null)
    .executeTakeFirst();
}

// ------------------------------------------------------------------ reads for particular callers

/** Live documents of an owner (`apps`: only those taking signups), other than `exceptId`. */
export async function countSites(
  db: Kysely<DB>,
  ownerId: number,
  opts: { apps?: boolean; exceptId?: number } = {},
): Promise<number> {
  let q = db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .where('type', '=', 'site')
    .where('trashed_at', 'is', null);
  if (opts.apps) q = q.where('enable_signups', '=', 1);
  if (opts.exceptId !== undefined) q = q.where('id', '!=', opts.exceptId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** The first live instance of an app that the account owns. */
export function instanceOf(db: Kysely<DB>, ownerId: number, appId: number): Promise<NodeRow | undefined> {
  return db
    .selectFrom('nodes')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('source_node_id', '=', appId)
    .where('type', '=', 'site')
    .where('trashed_at', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** A live document with its stored bytes (null when it has none yet). */
export async function siteWithContent(db: Kysely<DB>, id: number) {
  const row = await db
    .selectFrom('nodes')
    .leftJoin('node_contents', 'node_contents.node_id', 'nodes.id')
    .select(['nodes.id', 'nodes.name', 'nodes.type', 'nodes.checksum', ...CONTENT_COLUMNS])
    .where('nodes.id', '=', id)
    .where('nodes.trashed_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { base, splice_at, splice_end, splice, splice_map, ...node } = row;
  return { ...node, html: base === null ? null : applySplice({ base, splice_at, splice_end, splice, splice_map }) };
}

/** The columns a document's bytes are stored in (src/core/splice.ts). */
const CONTENT_COLUMNS = [
  'node_contents.base',
  'node_contents.splice_at',
  'node_contents.splice_end',
  'node_contents.splice',
  'node_contents.splice_map',
] as const;

/** Which of these names (lower case) a live node uses: at the owner's top level, or (`sites`) as a
 *  document name in the scope the owner's document names are unique in (nameScopeOf). */
export async function namesTaken(db: Kysely<DB>, ownerId: number, keys: string[], siteKeys: string[]) {
  const own = await db
    .selectFrom('nodes')
    .select('name_key')
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', 0)
    .where('name_key', 'in', keys)
    .where('trashed_at', 'is', null)
    .execute();
  const everywhere = siteKeys.length
    ? await db
        .selectFrom('nodes')
        .select('name_key')
        .where('name_key', 'in', siteKeys)
        .where(sql.ref('type'), '=', sql.lit('site'))
        .where('trashed_at', 'is', null)
        .where('name_scope', '=', nameScopeOf(ownerId))
        .execute()
    : [];
  return new Set([...own, ...everywhere].map((r) => r.name_key));
}

/** Changes a live node only when `when` holds for it (a compare-and-set); undefined when it did not. */
export function updateNodeIf(
  db: Kysely<DB>,
  id: number,
  set: Updateable<NodesTable>,
  when: { share_enabled?: 0 | 1; checksum?: string; type?: NodesTable['type'] } = {},
): Promise<NodeRow | undefined> {
  let q = db.updateTable('nodes').set(set).where('id', '=', id).where('trashed_at', 'is', null);
  if (when.share_enabled !== undefined) q = q.where('share_enabled', '=', when.share_enabled);
  if (when.checksum !== undefined) q = q.where('checksum', '=', when.checksum);
  if (when.type !== undefined) q = q.where('type', '=', when.type);
  return q.returningAll().executeTakeFirst();
}

/** Records that sync clients have these nodes as of `now`. */
export async function markSynced(db: Kysely<DB>, ids: number[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('nodes').set({ last_synced_at: now }).where('id', 'in', ids).execute();
}

/** The owner's live tree in the shape structure versions are computed from. */
export function structureRowsOf(db: Kysely<DB>, ownerId: number) {
  return db
    .selectFrom('nodes')
    .select(['id', 'parent_id as parentId', 'type', 'path', 'name', 'checksum'])
    .where('owner_id', '=', ownerId)
    .where('trashed_at', 'is', null)
    .execute();
}

/** `lastSyncedAt` computed by the database, for the sync listing (the rule of src/sync/wire.ts `lastSyncedAt`). */
export const LAST_SYNCED_SQL = sql<string>`CASE WHEN last_synced_at IS NULL THEN modified_at WHEN saved_by_writer LIKE 'key:%' AND modified_at > last_synced_at THEN modified_at ELSE last_synced_at END`;

/** The columns sync clients see of every node of an owner (`lastSynced`: how the wire computes it). */
export function syncRowsOf(db: Kysely<DB>, ownerId: number, lastSynced: RawBuilder<string>) {
  return db
    .selectFrom('nodes')
    .select([
      'id',
      'type',
      'name',
      'parent_id as parentId',
      'path',
      lastSynced.as('lastSyncedAt'),
      'size',
      'modified_at as modifiedAt',
      'checksum',
    ])
    .where('owner_id', '=', ownerId)
    .where('trashed_at', 'is', null)
    .execute();
}

/** A node's stored bytes with the checksum they belong to (read together), or undefined. Inside a transaction
 *  whose content writes wait for its COMMIT, the bytes it will write. */
export async function storedContent(db: Kysely<DB>, nodeId: number) {
  const deferred = deferredContent(db, nodeId);
  if (deferred) return { checksum: deferred.checksum as string | null, html: deferred.bytes };
  const row = await db
    .selectFrom('node_contents')
    .innerJoin('nodes', 'nodes.id', 'node_contents.node_id')
    .select(['nodes.checksum', ...CONTENT_COLUMNS])
    .where('node_contents.node_id', '=', nodeId)
    .executeTakeFirst();
  return row && { checksum: row.checksum, html: applySplice(row) };
}

/** A live node by id with the columns `cols` (the sync wire's, say). */
export function nodeColumns<C extends keyof NodeRow & string>(db: Kysely<DB>, id: number, cols: readonly C[]) {
  return db
    .selectFrom('nodes')
    .select(cols as unknown as C[])
    .where('id', '=', id)
    .where('trashed_at', 'is', null)
    .executeTakeFirst();
}

/** The newest version of a document: what the next one continues from. */
export function newestVersion(db: Kysely<DB>, nodeId: number) {
  return db
    .selectFrom('versions')
    .select(['id', 'backup_number', 'is_diff', 'snapshot_id', 'content_hash', 'saved_by_kind'])
    .where('node_id', '=', nodeId)
    .orderBy('backup_number', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Whether a save's version is stored: the one of this document made at `createdAt` whose bytes have this
 *  checksum (the first 16 hex digits of their SHA-256). How a save whose COMMIT answer was lost is read back. */
export async function versionWritten(db: Kysely<DB>, nodeId: number, checksum: string, createdAt: string) {
  const row = await db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', nodeId)
    .where('created_at', '=', createdAt)
    .where('content_hash', 'like', `${checksum}%`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether any node (live or in the trash) names this blob: the sweep's last look before deleting. */
export async function blobNamed(db: Kysely<DB>, sha: string): Promise<boolean> {
  const r = await db.selectFrom('nodes').select('id').where('blob_sha256', '=', sha).limit(1).executeTakeFirst();
  return r !== undefined;
}

/** Every blob name some node (live or in the trash) holds. */
export async function blobsNamed(db: Kysely<DB>): Promise<Set<string>> {
  const rows = await db
    .selectFrom('nodes')
    .select('blob_sha256')
    .distinct()
    .where('blob_sha256', 'is not', null)
    .execute();
  return new Set(rows.map((r) => r.blob_sha256 as string));
}
