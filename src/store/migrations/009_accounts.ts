import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Account self-service: the browser a sign-in came from (shown in the list of sign-ins), and the
 *  usernames of deleted accounts, held back for a while so that links to their hosts reach no stranger. */
export function up009Accounts(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
    await db.schema
      .createTable('held_usernames')
      .addColumn('username', 'text', (c) => c.primaryKey())
      .addColumn('held_until', 'text', (c) => c.notNull())
      .execute();
  };
}
