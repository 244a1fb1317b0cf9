import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The activity of an account's tree (what changed, when, by whom and from which client), kept 90 days. */
export function up011Activity(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('activity')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('node_id', 'integer')
      .addColumn('node_type', 'text')
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('old_path', 'text')
      .addColumn('writer', 'text')
      .addColumn('client', 'text')
      .execute();
    await db.schema.createIndex('activity_owner').on('activity').columns(['owner_id', 'id']).execute();
  };
}
