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

/** What a collection uses of its caps: the records of its records folder and their bytes (the trash not
 *  counted), with what it holds beyond them since `since` (room taken for writes in progress, replaced bytes
 *  not yet swept: `collection_held`). */
export async function collectionUsage(
  db: Kysely<DB>,
  c: Pick<CollectionRow, 'id' | 'owner_id'>,
  folderId: number,
  since: string,
) {
  // One statement, so one snapshot: a write that turns its hold into a file between two statements would
  // be counted by neither (PostgreSQL's READ COMMITTED takes a snapshot per statement).
  const live = db
    .selectFrom('nodes')
    .where('owner_id', '=', c.owner_id)
    .where('parent_id', '=', folderId)
    .where('trashed_at', 'is', null);
  const held = db.selectFrom('collection_held').where('collection_id', '=', c.id).where('at', '>', since);
  const row = await db
    .selectFrom('collections')
    .select(() => [
      live.select((n) => n.fn.countAll<number>().as('n')).as('live_records'),
      live.select((n) => n.fn.coalesce(n.fn.sum<number>('size'), n.lit(0)).as('b')).as('live_bytes'),
      held.select((h) => h.fn.coalesce(h.fn.sum<number>('records'), h.lit(0)).as('r')).as('held_records'),
      held.select((h) => h.fn.coalesce(h.fn.sum<number>('bytes'), h.lit(0)).as('b')).as('held_bytes'),
    ])
    .where('id', '=', c.id)
    .executeTakeFirst();
  return {
    records: Number(row?.live_records ?? 0) + Number(row?.held_records ?? 0),
    bytes: Number(row?.live_bytes ?? 0) + Number(row?.held_bytes ?? 0),
  };
}

/** Forgets what a collection held before `before` (the blob sweep may have freed those bytes). A write: on
 *  SQLite, the first statement of a transaction that then reads and writes, so it holds the write lock from
 *  its start. */
export async function forgetHeld(db: Kysely<DB>, collectionId: string, before: string): Promise<void> {
  await db.deleteFrom('collection_held').where('collection_id', '=', collectionId).where('at', '<=', before).execute();
}

/** Holds room (bytes, and records) for a collection; returns the row's id. */
export async function hold(
  db: Kysely<DB>,
  row: { collection_id: string; at: string; bytes: number; records: number },
): Promise<number> {
  const made = await db.insertInto('collection_held').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(made.id);
}

/** Changes what a hold counts (null: drops it, its room now counted by a record file). */
export async function settleHold(
  db: Kysely<DB>,
  id: number,
  set: { bytes: number; records: number } | null,
): Promise<void> {
  if (set) await db.updateTable('collection_held').set(set).where('id', '=', id).execute();
  else await db.deleteFrom('collection_held').where('id', '=', id).execute();
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
