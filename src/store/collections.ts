// The collections store: a collection's row (src/collections/collections.ts has the rules), and the
// record files of its `records/` folder.
import type { Kysely, Selectable } from 'kysely';
import type { CollectionsTable, DB } from './schema.ts';

export type CollectionRow = Selectable<CollectionsTable>;

export function insertCollection(db: Kysely<DB>, row: CollectionRow): Promise<unknown> {
  return db.insertInto('collections').values(row).execute();
}

export function collectionById(db: Kysely<DB>, id: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('id', '=', id).executeTakeFirst();
}

export function collectionOfFolder(db: Kysely<DB>, folderId: number): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('folder_id', '=', folderId).executeTakeFirst();
}

export function collectionOfRecordsFolder(db: Kysely<DB>, recordsFolderId: number): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('records_folder_id', '=', recordsFolderId).executeTakeFirst();
}

/** The folder ids of an owner's collections (the dashboard marks them). */
export async function collectionFoldersOf(db: Kysely<DB>, ownerId: number): Promise<Map<number, string>> {
  const rows = await db.selectFrom('collections').select(['folder_id', 'id']).where('owner_id', '=', ownerId).execute();
  return new Map(rows.map((r) => [r.folder_id, r.id]));
}

export function deleteCollection(db: Kysely<DB>, id: string): Promise<unknown> {
  return db.deleteFrom('collections').where('id', '=', id).execute();
}

export function setRecordsFolder(db: Kysely<DB>, id: string, recordsFolderId: number): Promise<unknown> {
  return db.updateTable('collections').set({ records_folder_id: recordsFolderId }).where('id', '=', id).execute();
}

/** Takes the next record key: one UPDATE, so two submissions never get the same key. */
export async function takeRecordKey(db: Kysely<DB>, id: string): Promise<number> {
  const row = await db
    .updateTable('collections')
    .set((eb) => ({ next_key: eb('next_key', '+', 1) }))
    .where('id', '=', id)
    .returning('next_key')
    .executeTakeFirstOrThrow();
  return Number(row.next_key) - 1;
}

/** The record files (`.json` uploads) of a records folder, newest first, a page of them, and how many. */
export async function recordFiles(db: Kysely<DB>, ownerId: number, folderId: number, limit: number, offset: number) {
  const base = db
    .selectFrom('nodes')
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', folderId)
    .where('type', '=', 'upload')
    .where('name_key', 'like', '%.json')
    .where('trashed_at', 'is', null);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** How many records a records folder holds and their bytes (the trash not counted). */
export async function recordUsage(db: Kysely<DB>, ownerId: number, folderId: number) {
  const row = await db
    .selectFrom('nodes')
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes'),
    ])
    .where('owner_id', '=', ownerId)
    .where('parent_id', '=', folderId)
    .where('trashed_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { records: Number(row.n), bytes: Number(row.bytes) };
}

export function setCollectionLimits(
  db: Kysely<DB>,
  id: string,
  set: Pick<CollectionRow, 'max_records' | 'max_bytes' | 'max_per_address_hour'>,
): Promise<unknown> {
  return db.updateTable('collections').set(set).where('id', '=', id).execute();
}
