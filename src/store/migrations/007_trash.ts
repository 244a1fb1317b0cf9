import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The trash: a deleted node keeps its row (content, versions, blob) for 30 days with `trashed_at`
 *  set; `trash_root` is the node whose deletion took it (itself for that node), and the root remembers
 *  the folder it was in (`trashed_parent_id`) to go back there. Names in the trash block no new name:
 *  both unique name indexes now leave trashed rows out. */
export function up007Trash(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('nodes').addColumn('trashed_at', 'text').execute();
    await db.schema.alterTable('nodes').addColumn('trash_root', 'integer').execute();
    await db.schema.alterTable('nodes').addColumn('trashed_parent_id', 'integer').execute();
    await db.schema.dropIndex('nodes_site_name').execute();
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .column('name_key')
      .unique()
      .where(sql<boolean>`type = 'site' and name_key not in ('index.html', 'index.htmlclay') and trashed_at is null`)
      .execute();
    await db.schema.dropIndex('nodes_sibling_name').execute();
    await db.schema
      .createIndex('nodes_sibling_name')
      .on('nodes')
      .columns(['owner_id', 'parent_id', 'type', 'name_key'])
      .unique()
      .where(sql<boolean>`trashed_at is null`)
      .execute();
    await db.schema.createIndex('nodes_trash').on('nodes').columns(['trash_root']).execute();
  };
}
