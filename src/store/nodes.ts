// The nodes store: node rows read and written, each function taking an executor (the database, or the
// transaction a write runs in). Names compare by `name_key` (lower case), as the unique indexes do. The
// rules (names, depth, quotas, who may) live in src/nodes/tree.ts and the other use cases.
import { sql, type CompiledQuery, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DB, NodesTable } from './schema.ts';

type NodeRow = Selectable<NodesTable>;

/** One node by id, or undefined (ids that cannot exist are not looked up). */
export function nodeById(db: Kysely<DB>, id: number): Promise<NodeRow | undefined> {
  if (!Number.isSafeInteger(id) || id <= 0) return Promise.resolve(undefined);
  return db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
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
    .executeTakeFirst();
}

/** The site with this name anywhere in Kiln. Site names are unique across Kiln, so the partial unique
 *  index answers in one probe (the literal 'site' lets SQLite and PostgreSQL match the index's
 *  predicate). This runs on every document GET: the query is compiled once per database and reused. */
const siteLookups = new WeakMap<Kysely<DB>, CompiledQuery<NodeRow>>();
export async function siteNamed(db: Kysely<DB>, name: string): Promise<NodeRow | undefined> {
  let compiled = siteLookups.get(db);
  if (!compiled) {
    compiled = db
      .selectFrom('nodes')
      .selectAll()
      .where('name_key', '=', '')
      .where(sql.ref('type'), '=', sql.lit('site'))
      .compile();
    siteLookups.set(db, compiled);
  }
  const result = await db.executeQuery<NodeRow>({ ...compiled, parameters: [name.toLowerCase()] });
  return result.rows[0];
}

/** Every node of an owner; `ordered`: by path, then name (folders before what they hold). */
export function nodesOf(db: Kysely<DB>, ownerId: number, opts: { ordered?: boolean } = {}): Promise<NodeRow[]> {
  let q = db.selectFrom('nodes').selectAll().where('owner_id', '=', ownerId);
  if (opts.ordered) q = q.orderBy('path').orderBy('name_key').orderBy('id');
  return q.execute();
}

/** The owner's nodes with this name in any folder (`exceptSites`: folders and uploads only). */
export function nodesNamed(
  db: Kysely<DB>,
  ownerId: number,
  name: string,
  opts: { exceptSites?: boolean } = {},
): Promise<NodeRow[]> {
  let q = db.selectFrom('nodes').selectAll().where('owner_id', '=', ownerId).where('name_key', '=', name.toLowerCase());
  if (opts.exceptSites) q = q.where('type', '!=', 'site');
  return q.execute();
}

/** A sibling with this name in a folder, other than `exceptId`. */
export function siblingNamed(db: Kysely<DB>, ownerId: number, parentId: number, name: string, exceptId?: number) {
  let q = db
    .selectFrom('nodes')
    .select(['id', 'type', 'name'])
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .where('name_key', '=', name.toLowerCase());
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

/** A site with this name anywhere in Kiln other than `exceptId` (for the name-free check). */
export function otherSiteNamed(db: Kysely<DB>, name: string, exceptId?: number) {
  let q = db
    .selectFrom('nodes')
    .select(['id', 'owner_id', 'path', 'name'])
    .where('name_key', '=', name.toLowerCase())
    .where(sql.ref('type'), '=', sql.lit('site'));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

export function insertNode(db: Kysely<DB>, row: Insertable<NodesTable>): Promise<NodeRow> {
  return db.insertInto('nodes').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateNode(db: Kysely<DB>, id: number, set: Updateable<NodesTable>): Promise<NodeRow> {
  return db.updateTable('nodes').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
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
    .execute();
}

/** Gives every child of a folder its path. */
export async function setChildrenPath(db: Kysely<DB>, ownerId: number, parentId: number, path: string): Promise<void> {
  await db
    .updateTable('nodes')
    .set({ path })
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', parentId)
    .execute();
}
