import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Contact messages sent from an account's pages (hyperclayjs `sendMessage`), kept for their owner. */
export function up013Messages(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('messages')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('page', 'text', (c) => c.notNull())
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('score', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('read_at', 'text')
      .execute();
    await db.schema.createIndex('messages_owner').on('messages').columns(['owner_id', 'id']).execute();
  };
}
