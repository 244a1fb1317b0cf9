import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** A changed username is held back too, and its old host leads to the new one meanwhile (`moved_to`). */
export function up012MovedUsernames(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('held_usernames').addColumn('moved_to', 'text').execute();
  };
}
