import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** What each account sent to the built-in AI engines per UTC day (src/ai-edit/budget.ts): one row per account
 *  and day, counted by every process, so a daily budget holds across processes. */
export function up023AiEditUsage(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('ai_edit_usage')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('bytes', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('ai_edit_usage_pk', ['account_id', 'day'])
      .execute();
  };
}
