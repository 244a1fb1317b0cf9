import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Old addresses of renamed or moved documents: `<owner>/<old path>` answers with a redirect to the
 *  document for 30 days (links people shared keep working). */
export function up008Redirects(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('redirects')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('from_key', 'text', (c) => c.notNull())
      .addColumn('node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('redirects_from').on('redirects').columns(['owner_id', 'from_key']).unique().execute();
  };
}
