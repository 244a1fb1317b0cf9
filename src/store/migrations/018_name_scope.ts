import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Document names unique across this Kiln (as Hyperclay, the default) or per account: an instance
 *  setting (`document-names`, src/admin/admin.ts). Each document row carries the scope its name is unique
 *  in, `name_scope`: 0 (this Kiln) or its owner's id, so the one unique index holds in both modes. */
export function up018NameScope(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .alterTable('nodes')
      .addColumn('name_scope', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.dropIndex('nodes_site_name').execute();
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .columns(['name_scope', 'name_key'])
      .unique()
      .where(
        sql<boolean>`type = 'site' and name_key not in ('index.html', 'index.htmlclay', 'submission-form.html', 'dashboard.html') and trashed_at is null`,
      )
      .execute();
    // A document is found by its owner and name (src/store/nodes.ts ownerNodesNamed, every document GET):
    // one probe, however many accounts have an index.html.
    await db.schema.createIndex('nodes_owner_name').on('nodes').columns(['owner_id', 'name_key']).execute();
  };
}
