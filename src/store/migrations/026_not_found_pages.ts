import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** `404.html`, an account's page for missing addresses (src/nodes/serve.ts), is unique among siblings only,
 *  like `index.html`: every account may have one, whatever the instance's document-names setting. */
export function up026NotFoundPages(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.dropIndex('nodes_site_name').execute();
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .columns(['name_scope', 'name_key'])
      .unique()
      .where(
        sql<boolean>`type = 'site' and name_key not in ('index.html', 'index.htmlclay', 'submission-form.html', 'dashboard.html', '404.html') and trashed_at is null`,
      )
      .execute();
  };
}
