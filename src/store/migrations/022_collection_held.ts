import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Bytes (and records) a collection holds beyond its live record files: room taken for a submitter's write
 *  before its bytes are stored, and the bytes a submitter's change replaced (or stored for a write that then
 *  failed), which stay in the blob store until the sweep may free them. They count against the collection's
 *  caps (src/collections/collections.ts); rows older than the sweep's grace are deleted as new ones come. */
export function up022CollectionHeld(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('collection_held')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('bytes', 'integer', (c) => c.notNull())
      .addColumn('records', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('collection_held_at').on('collection_held').columns(['collection_id', 'at']).execute();
  };
}
