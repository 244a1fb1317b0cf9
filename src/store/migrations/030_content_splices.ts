import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** A document's content row may hold several splices (src/core/splice.ts): their bounds go in `splice_map`.
 *  Adding a column without a default changes no row, and a process still on the code before it never names the
 *  column, so it keeps serving while this runs; rows it cannot read are refused, not misread (splice.ts says how). */
export function up030ContentSplices(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('node_contents').addColumn('splice_map', t.bytes).execute();
  };
}
