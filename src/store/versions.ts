// The versions store: a document's saved versions, written by the save pipeline (src/store/saves.ts) and
// read back by src/save/history.ts. (The newest version and the lost-commit check: nodes.ts.)
import type { Executor, Row } from './schema.ts';

/** A document's versions, newest first, with the username of whoever saved each. */
export function versionsOf(db: Executor, nodeId: number) {
  return db
    .selectFrom('versions')
    .leftJoin('accounts', 'accounts.id', 'versions.saved_by_account_id')
    .select([
      'versions.id',
      'versions.node_id',
      'versions.backup_number',
      'versions.created_at',
      'versions.size',
      'versions.saved_by_kind',
      'versions.is_diff',
      'versions.content_hash',
      'accounts.username',
    ])
    .where('versions.node_id', '=', nodeId)
    .orderBy('versions.backup_number', 'desc')
    .execute();
}

/** One version by id, or undefined. */
export function versionById(db: Executor, id: number): Promise<Row<'versions'> | undefined> {
  return db.selectFrom('versions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The snapshot a diff version starts from (its packed bytes and number); throws when it is missing. */
export function snapshotVersion(db: Executor, snapshotId: number) {
  return db
    .selectFrom('versions')
    .select(['html', 'backup_number'])
    .where('id', '=', snapshotId)
    .executeTakeFirstOrThrow();
}

/** The diffs of a document after backup `after` up to and including backup `upTo`, oldest first. */
export function diffsBetween(db: Executor, nodeId: number, after: number, upTo: number) {
  return db
    .selectFrom('versions')
    .select(['diff_content'])
    .where('node_id', '=', nodeId)
    .where('backup_number', '>', after)
    .where('backup_number', '<=', upTo)
    .orderBy('backup_number', 'asc')
    .execute();
}

/** Whether a version of this id belongs to the document. */
export async function isVersionOf(db: Executor, id: number, nodeId: number): Promise<boolean> {
  const v = await db
    .selectFrom('versions')
    .select('id')
    .where('id', '=', id)
    .where('node_id', '=', nodeId)
    .executeTakeFirst();
  return v !== undefined;
}

/** How the document's first two versions were saved (`saved_by_kind`), oldest first. */
export function firstVersionKinds(db: Executor, nodeId: number) {
  return db.selectFrom('versions').select(['saved_by_kind']).where('node_id', '=', nodeId).limit(2).execute();
}

/** The version of a document just before backup `backupNumber`, or undefined. */
export function versionBefore(db: Executor, nodeId: number, backupNumber: number) {
  return db
    .selectFrom('versions')
    .select(['id', 'backup_number'])
    .where('node_id', '=', nodeId)
    .where('backup_number', '<', backupNumber)
    .orderBy('backup_number', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A document's newest versions (at most `limit`), newest first: how each was saved and its content's hash. */
export function newestVersions(db: Executor, nodeId: number, limit: number) {
  return db
    .selectFrom('versions')
    .select(['backup_number', 'content_hash', 'saved_by_kind'])
    .where('node_id', '=', nodeId)
    .orderBy('backup_number', 'desc')
    .limit(limit)
    .execute();
}
