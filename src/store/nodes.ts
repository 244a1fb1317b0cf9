// The node lookups the tree, the sync API and serving share, each taking an executor (the database,
// or the transaction a write runs in). Names compare by `name_key` (lower case), as the unique indexes do.
import { sql, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
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
