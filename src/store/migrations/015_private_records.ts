import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Collection records are private: a collection's `records/` folder and everything in it become private
 *  (they were public uploads, so anyone could read `records/1.json`); from now on whatever is put into a
 *  private folder is private (src/store/nodes.ts). Each collection also gets its own bounds on what
 *  anonymous submitters may store (null: the defaults in src/limits.ts `collectionLimits`). */
export function up015PrivateRecords(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('collections').addColumn('max_records', 'integer').execute();
    await db.schema.alterTable('collections').addColumn('max_bytes', 'bigint').execute();
    await db.schema.alterTable('collections').addColumn('max_per_address_hour', 'integer').execute();
    await makeRecordsPrivate(db);
  };
}

/** Every collection's records folder and everything below it private. */
export async function makeRecordsPrivate(db: Kysely<any>): Promise<void> {
  const collections = await db.selectFrom('collections').select(['records_folder_id']).execute();
  for (const c of collections) {
    // The folder and everything below it (trashed too: a restore brings it back), level by level.
    let level: number[] = [c.records_folder_id];
    while (level.length > 0) {
      await db.updateTable('nodes').set({ visibility: 'private' }).where('id', 'in', level).execute();
      const below = await db.selectFrom('nodes').select('id').where('parent_id', 'in', level).execute();
      level = below.map((n) => n.id as number);
    }
  }
}
