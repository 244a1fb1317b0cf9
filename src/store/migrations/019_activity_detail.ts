import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** An activity line's facts beyond its kind and path, as JSON (an AI edit: bytes each way, outcome, time). */
export function up019ActivityDetail(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('activity').addColumn('detail', 'text').execute();
  };
}
