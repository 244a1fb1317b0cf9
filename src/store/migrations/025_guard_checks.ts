import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The data-clobber guard's owed checks (src/guard/guard.ts): one row per guarded write, inserted in the write's
 *  own transaction and deleted in the transaction that applies its check, so a check survives a killed process
 *  and a busy extraction pool (#44.1). `version_id` is the version the write made (its bytes), `before_version_id`
 *  the one before it. And the guard's `safe_version_id`: the newest version known to hold the protected data,
 *  an event's revert target (#44.2). */
export function up025GuardChecks(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('data_loss_checks')
      .addColumn('version_id', 'integer', (c) => c.primaryKey())
      .addColumn('node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
      .addColumn('before_version_id', 'integer')
      .addColumn('by_kind', 'text', (c) => c.notNull())
      .addColumn('by_trigger', 'text')
      .addColumn('writer', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('data_loss_checks_node')
      .on('data_loss_checks')
      .columns(['node_id', 'version_id'])
      .execute();
    await db.schema.alterTable('data_loss_guards').addColumn('safe_version_id', 'integer').execute();
  };
}
