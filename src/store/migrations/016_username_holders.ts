import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The account a renamed username is held for (`account_id`): that account may take the name back
 *  during the hold, nobody else may. Null for a deleted account's name (ids are never reused, so a
 *  deleted account's rename holds stay held from everyone). Holds made before this are credited to the
 *  account that now has the name they lead to. */
export function up016UsernameHolders(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('held_usernames').addColumn('account_id', 'integer').execute();
    await sql`update held_usernames set account_id = (select id from accounts where accounts.username = held_usernames.moved_to) where moved_to is not null`.execute(
      db,
    );
  };
}
