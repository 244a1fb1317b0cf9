import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Compiled utility stylesheets, one per document that links one. */
export function up002(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('stylesheets')
      .addColumn('node_id', 'integer', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
      .addColumn('css', 'text', (c) => c.notNull())
      .addColumn('source_checksum', 'text', (c) => c.notNull())
      .addColumn('compiled_at', 'text', (c) => c.notNull())
      .execute();
  };
}
