import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The data-clobber guard's state of a document (src/guard): the data it protects (`baseline`, the page's
 *  `api` island as JSON), whether a person's edit was saved since the last sync write, and the pending event
 *  (JSON, with the destroyed data and the version before the clobber) while one is open. */
export function up017DataLoss(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('data_loss_guards')
      .addColumn('node_id', 'integer', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('baseline', 'text')
      .addColumn('ui_work_pending', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('event_id', 'text')
      .addColumn('event', 'text')
      .addColumn('event_at', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('data_loss_guards_pending')
      .on('data_loss_guards')
      .columns(['owner_id', 'event_at'])
      .execute();
  };
}
