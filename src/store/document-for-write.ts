// The document a save writes, as it reads it under lock (src/store/saves.ts) and as a group of saves keeps it
// from one save to the next (src/store/group-state.ts): below both, so neither imports the other for it.
import type { ContentLayout } from '../core/splice.ts';
import type { Row, Tx } from './schema.ts';

export type DocumentForWrite = Omit<Read, LastColumns> & {
  /** As src/store/nodes.ts's `newestVersion` reads it. */
  last:
    | Pick<Row<'versions'>, 'id' | 'backup_number' | 'is_diff' | 'snapshot_id' | 'content_hash' | 'saved_by_kind'>
    | undefined;
  /** How its content row is stored, where the store splices (PostgreSQL); undefined when the next write is
   *  to be a whole one (no row, or a group's new base not written yet). */
  layout?: ContentLayout;
};

/** The newest version's columns in the read (the node's own `last_synced_at` is not one). */
type LastColumns =
  `last_${'id' | 'backup_number' | 'is_diff' | 'snapshot_id' | 'content_hash' | 'created_at' | 'saved_by_kind'}`;

/** The document (the whole row: a writer that found it before the lock compares it, src/save/pipeline.ts) and its
 *  newest version (null columns when it has none) in one statement: on PostgreSQL each statement is a round trip. */
export const documentQuery = (tx: Tx, nodeId: number) =>
  tx
    .selectFrom('nodes')
    .leftJoin('versions as last', (j) =>
      j.onRef('last.node_id', '=', 'nodes.id').on('last.backup_number', '=', (eb) =>
        eb
          .selectFrom('versions')
          .select((v) => v.fn.max('backup_number').as('n'))
          .where('node_id', '=', nodeId),
      ),
    )
    .selectAll('nodes')
    .select([
      'last.id as last_id',
      'last.backup_number as last_backup_number',
      'last.is_diff as last_is_diff',
      'last.snapshot_id as last_snapshot_id',
      'last.content_hash as last_content_hash',
      'last.created_at as last_created_at',
      'last.saved_by_kind as last_saved_by_kind',
    ])
    .where('nodes.id', '=', nodeId)
    .where('nodes.trashed_at', 'is', null);

export type Read = NonNullable<Awaited<ReturnType<ReturnType<typeof documentQuery>['executeTakeFirst']>>>;
