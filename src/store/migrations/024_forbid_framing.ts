import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** A document's owner may forbid framing by other sites (`frame-ancestors 'self'` on every answer of it). */
export function up024ForbidFraming(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .alterTable('nodes')
      .addColumn('forbid_framing', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  };
}
