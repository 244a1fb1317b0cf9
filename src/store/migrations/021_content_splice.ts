import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** A document's content is stored as a base and one splice (src/core/splice.ts): a save rewrites the changed
 *  span, not the whole row. `html` is renamed `base` so that a process still running the code before this
 *  migration fails on the row instead of serving or overwriting a base without its splice. */
export function up021ContentSplice(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('node_contents').renameColumn('html', 'base').execute();
    await db.schema.alterTable('node_contents').addColumn('splice_at', 'integer').execute();
    await db.schema.alterTable('node_contents').addColumn('splice_end', 'integer').execute();
    await db.schema.alterTable('node_contents').addColumn('splice', t.bytes).execute();
    if (t.bytes !== 'bytea') return;
    await sql`DO $$ BEGIN
      ALTER TABLE node_contents ALTER COLUMN splice SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported THEN NULL;
    END $$`.execute(db);
  };
}
