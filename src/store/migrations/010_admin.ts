import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Administration: an account can be suspended (its hosts answer 451, it cannot sign in, its keys stop). */
export function up010Admin(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('accounts').addColumn('suspended_at', 'text').execute();
  };
}
