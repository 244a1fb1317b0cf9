import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Collections: a folder that gathers submissions as JSON files in its `records/` folder. The id
 *  (`col_…`) is public and stable across renames and moves (it names the folder's row, not its path);
 *  `next_key` numbers records. A collection's two pages (`submission-form.html`, `dashboard.html`) are
 *  in every collection folder, so those names join the index names in being unique among siblings
 *  rather than across the instance. */
export function up014Collections(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('collections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('folder_id', 'integer', (c) => c.notNull().unique().references('nodes.id').onDelete('cascade'))
      .addColumn('records_folder_id', 'integer', (c) => c.notNull())
      .addColumn('submit_token', 'text', (c) => c.notNull())
      .addColumn('next_key', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('collections_records_folder').on('collections').column('records_folder_id').execute();
    await db.schema.dropIndex('nodes_site_name').execute();
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .column('name_key')
      .unique()
      .where(
        sql<boolean>`type = 'site' and name_key not in ('index.html', 'index.htmlclay', 'submission-form.html', 'dashboard.html') and trashed_at is null`,
      )
      .execute();
  };
}
