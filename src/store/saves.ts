// The rows a document save reads and writes, chosen with the database (src/store/db.ts). A save is the
// core operation, so on PostgreSQL, where each statement is a network round trip, it takes as few as
// it can: the document read and locked in one statement, and the version, content, node and activity
// line written in one (data-modifying CTEs). SQLite runs the same steps as plain statements in-process.
import type { ActivityRow } from './activity.ts';
import { activityValues } from './activity.ts';
import type { NewRow, Tx } from './schema.ts';

/** What a save changes once its version is worked out. */
export interface SaveRows {
  version: NewRow<'versions'>;
  bytes: Buffer;
  node: { id: number; checksum: string; now: string; accountId: number | null; writer: string | null };
  activity: ActivityRow | null;
}

export interface SaveStore {
  /** The live document a save writes, locked until the transaction ends (PostgreSQL: other processes'
   *  saves of it wait, then see this one's commit), or undefined. */
  documentForWrite(tx: Tx, nodeId: number): Promise<DocumentForWrite | undefined>;
  write(tx: Tx, rows: SaveRows): Promise<void>;
}

export type DocumentForWrite = Awaited<ReturnType<ReturnType<typeof documentQuery>['executeTakeFirstOrThrow']>>;

const documentQuery = (tx: Tx, nodeId: number) =>
  tx
    .selectFrom('nodes')
    .select([
      'nodes.id',
      'nodes.owner_id',
      'nodes.path',
      'nodes.name',
      'nodes.type',
      'nodes.checksum',
      'nodes.modified_at',
      'nodes.saved_by_account_id',
      'nodes.saved_by_writer',
    ])
    .where('nodes.id', '=', nodeId)
    .where('nodes.trashed_at', 'is', null);

const nodeUpdate = (n: SaveRows['node'], size: number) => ({
  checksum: n.checksum,
  size,
  modified_at: n.now,
  saved_by_account_id: n.accountId,
  saved_by_writer: n.writer,
});

/** SQLite: one writer at a time already, in this process; each statement is a function call. */
export const sqliteSaves: SaveStore = {
  documentForWrite: (tx, nodeId) => documentQuery(tx, nodeId).executeTakeFirst(),
  async write(tx, r) {
    await tx.insertInto('versions').values(r.version).execute();
    await tx
      .insertInto('node_contents')
      .values({ node_id: r.node.id, html: r.bytes })
      .onConflict((c) => c.column('node_id').doUpdateSet({ html: r.bytes }))
      .execute();
    await tx.updateTable('nodes').set(nodeUpdate(r.node, r.bytes.length)).where('id', '=', r.node.id).execute();
    if (r.activity) await tx.insertInto('activity').values(activityValues(r.activity)).execute();
  },
};

/** PostgreSQL: two round trips instead of six. */
export const postgresSaves: SaveStore = {
  documentForWrite: (tx, nodeId) => documentQuery(tx, nodeId).forUpdate().executeTakeFirst(),
  async write(tx, r) {
    let q = tx
      .with('v', (db) => db.insertInto('versions').values(r.version))
      .with('c', (db) =>
        db
          .insertInto('node_contents')
          .values({ node_id: r.node.id, html: r.bytes })
          .onConflict((c) => c.column('node_id').doUpdateSet({ html: r.bytes })),
      );
    if (r.activity) {
      const line = activityValues(r.activity);
      q = q.with('a', (db) => db.insertInto('activity').values(line)) as unknown as typeof q;
    }
    await q.updateTable('nodes').set(nodeUpdate(r.node, r.bytes.length)).where('id', '=', r.node.id).execute();
  },
};
