import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Every account may have its own index.html (its host's home page): the global uniqueness of
 *  document names leaves the index names out (they stay unique among siblings). */
export function up003(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.dropIndex('nodes_site_name').execute();
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .column('name_key')
      .unique()
      .where(sql<boolean>`type = 'site' and name_key not in ('index.html', 'index.htmlclay')`)
      .execute();
    // Lookups by name use a plain index: a query with a parameter cannot prove the partial predicate.
    await db.schema.createIndex('nodes_name_key').on('nodes').column('name_key').execute();
  };
}
