// The rows a document save reads and writes, chosen with the database (src/store/db.ts). A save is the
// core operation, so on PostgreSQL, where each statement is a network round trip, it takes as few as
// it can: the document read and locked in one statement, and the version, content, node and activity
// line written in one (data-modifying CTEs). SQLite runs the same steps as plain statements in-process.
import type { ActivityRow } from './activity.ts';
import { activityValues } from './activity.ts';
import type { NewRow, Tx } from './schema.ts';
import { newestVersion } from './nodes.ts';
import { checksumOfHash } from '../core/checksum.ts';
import { deferContent, knownDocument, rememberDocument, replaceContent } from './group-state.ts';
import { sql } from 'kysely';
import { type ContentLayout, nextSplice, type Spliced, spliceColumns, storedRegions } from '../core/splice.ts';
import { type DocumentForWrite, documentQuery, type Read } from './document-for-write.ts';

/** What a save changes once its version is worked out. */
export interface SaveRows {
  version: NewRow<'versions'>;
  bytes: Buffer;
  /** The content before this save, when the pipeline has it without a read: the store may then write only the
   *  span that changed (src/core/splice.ts). */
  previous: Uint8Array | null;
  /** How the content row holds `previous` (DocumentForWrite's `layout`). */
  layout: ContentLayout | undefined;
  node: { id: number; checksum: string; now: string; accountId: number | null; writer: string | null };
  activity: ActivityRow | null;
  /** The data-clobber guard's owed check of this write, when it is guarded (keyed by the version written). */
  check: GuardCheck | null;
}

/** An owed guard check as the write records it (data_loss_checks without the ids the write makes). */
export type GuardCheck = Omit<NewRow<'data_loss_checks'>, 'version_id' | 'node_id'>;

export interface SaveStore {
  /** The live document a save writes and its newest version (`last`), locked until the transaction ends
   *  (PostgreSQL: other processes' saves of it wait, then see this one's commit), or undefined. */
  documentForWrite(tx: Tx, nodeId: number): Promise<DocumentForWrite | undefined>;
  /** Writes the rows; the id of the version written. */
  write(tx: Tx, rows: SaveRows): Promise<number>;
}

/** Splits the row into the document and its newest version. Every save writes a version and the node's
 *  checksum and time together, so they agree; when they do not, the join's version came from before a lock
 *  wait (PostgreSQL reads the locked row again after the wait, the joined one not: another process's save
 *  committed meanwhile), and the newest version is read again. */
async function split(tx: Tx, row: Read | undefined): Promise<DocumentForWrite | undefined> {
  if (!row) return undefined;
  const {
    last_id,
    last_backup_number,
    last_is_diff,
    last_snapshot_id,
    last_content_hash,
    last_created_at,
    last_saved_by_kind,
    ...node
  } = row;
  const last =
    last_id === null
      ? undefined
      : {
          id: last_id,
          backup_number: last_backup_number!,
          is_diff: last_is_diff!,
          snapshot_id: last_snapshot_id,
          content_hash: last_content_hash!,
          saved_by_kind: last_saved_by_kind!,
        };
  const agrees = last
    ? node.checksum === checksumOfHash(last.content_hash) && node.modified_at === last_created_at
    : node.checksum === null;
  return { ...node, last: agrees ? last : await newestVersion(tx, node.id) };
}

const nodeUpdate = (n: SaveRows['node'], size: number) => ({
  checksum: n.checksum,
  size,
  modified_at: n.now,
  saved_by_account_id: n.accountId,
  saved_by_writer: n.writer,
});

/** The document as this transaction knows it when it holds it already (grouped saves), else `read` and kept. */
async function known(tx: Tx, nodeId: number, read: () => Promise<DocumentForWrite | undefined>) {
  const doc = knownDocument(tx, nodeId) ?? (await read());
  if (doc) rememberDocument(tx, doc);
  return doc;
}

/** What the transaction knows of the document once `r` is written (when it keeps it: grouped saves). */
function written(tx: Tx, r: SaveRows, versionId: number, layout?: ContentLayout): void {
  const doc = knownDocument(tx, r.node.id);
  if (!doc) return;
  const { backup_number, is_diff, snapshot_id, content_hash, saved_by_kind } = r.version;
  rememberDocument(tx, {
    ...doc,
    layout,
    checksum: r.node.checksum,
    modified_at: r.node.now,
    saved_by_account_id: r.node.accountId,
    saved_by_writer: r.node.writer,
    last: { id: versionId, backup_number, is_diff, snapshot_id: snapshot_id ?? null, content_hash, saved_by_kind },
  });
}

/** The PostgreSQL read also says how the content row is laid out (the lengths of its base and splice, and the
 *  splices' bounds; `length` of a stored value reads its header, not its bytes): a save then sends the changed
 *  spans only. */
/** The content row's layout columns, as both reads below select them. */
const LAYOUT = [
  sql<number | null>`length(node_contents.base)`.as('base_size'),
  sql<number | null>`length(node_contents.splice)`.as('splice_size'),
  'node_contents.splice_at',
  'node_contents.splice_end',
  'node_contents.splice_map',
] as const;

const documentWithLayout = (tx: Tx, nodeId: number) =>
  documentQuery(tx, nodeId)
    .leftJoin('node_contents', 'node_contents.node_id', 'nodes.id')
    .select(LAYOUT)
    .forUpdate(['nodes']);

/** The content row's layout alone (the document's row is locked already). */
const layoutQuery = (tx: Tx, nodeId: number) =>
  tx.selectFrom('node_contents').select(LAYOUT).where('node_id', '=', nodeId);

type LayoutRow = Pick<
  NonNullable<Awaited<ReturnType<ReturnType<typeof layoutQuery>['executeTakeFirst']>>>,
  'base_size' | 'splice_size' | 'splice_at' | 'splice_end' | 'splice_map'
>;

const layoutOf = (r: LayoutRow | undefined): ContentLayout | undefined =>
  !r || r.base_size === null ? undefined : { baseSize: r.base_size, regions: storedRegions(r, r.splice_size ?? 0) };

async function laidOut(tx: Tx, nodeId: number): Promise<DocumentForWrite | undefined> {
  const row = await documentWithLayout(tx, nodeId).executeTakeFirst();
  if (!row) return undefined;
  const { base_size, splice_size, splice_at, splice_end, splice_map, ...rest } = row;
  const doc = await split(tx, rest);
  if (!doc) return undefined;
  // After a wait on the lock, PostgreSQL reads the locked row again but not the joined ones: when the joined version
  // was stale (split read the newest again), so is the joined content row's layout, and splices placed by it would
  // write the content at the wrong places. Read it again too, under the lock.
  const fresh = (doc.last?.id ?? null) === (rest.last_id ?? null);
  const layout = fresh
    ? layoutOf({ base_size, splice_size, splice_at, splice_end, splice_map })
    : layoutOf(await layoutQuery(tx, nodeId).executeTakeFirst());
  return { ...doc, layout };
}

/** SQLite: one writer at a time already, in this process; each statement is a function call. */
export const sqliteSaves: SaveStore = {
  documentForWrite: (tx, nodeId) =>
    known(tx, nodeId, async () => split(tx, await documentQuery(tx, nodeId).executeTakeFirst())),
  async write(tx, r) {
    const v = await tx.insertInto('versions').values(r.version).returning('id').executeTakeFirstOrThrow();
    if (!deferContent(tx, r.node.id, r.node.checksum, r.bytes))
      await tx
        .insertInto('node_contents')
        .values({ node_id: r.node.id, base: r.bytes })
        .onConflict(replaceContent)
        .execute();
    await tx.updateTable('nodes').set(nodeUpdate(r.node, r.bytes.length)).where('id', '=', r.node.id).execute();
    if (r.activity) await tx.insertInto('activity').values(activityValues(r.activity)).execute();
    if (r.check)
      await tx
        .insertInto('data_loss_checks')
        .values({ ...r.check, version_id: v.id, node_id: r.node.id })
        .execute();
    written(tx, r, v.id);
    return v.id;
  },
};

/** PostgreSQL: two round trips instead of six (a save that joins a group commit defers its content to the
 *  COMMIT: src/store/group-state.ts), and the content row gets the span that changed when it can
 *  (src/core/splice.ts): a rewrite of the whole row was most of the database's work per save. */
export const postgresSaves: SaveStore = {
  documentForWrite: (tx, nodeId) => known(tx, nodeId, () => laidOut(tx, nodeId)),
  async write(tx, r) {
    // The row with these bytes as splices; null when they would be too large: the whole content is written,
    // now or (a deferred save) by the group, and the next save of it does the same.
    const spliced = r.layout && r.previous ? nextSplice(r.layout, r.previous, r.bytes) : null;
    const content: ContentWrite | null = deferContent(tx, r.node.id, r.node.checksum, r.bytes)
      ? null
      : (spliced ?? { whole: r.bytes });
    const after =
      content && 'whole' in content ? { baseSize: r.bytes.length, regions: [] } : (spliced?.layout ?? undefined);
    const { rows } = await saveStatement(r, content).execute(tx);
    written(tx, r, rows[0].id, after);
    return rows[0].id;
  },
};

/** The content row's write: the whole content (a new base), or the splices' bounds and bytes. */
type ContentWrite = Spliced | { whole: Buffer };

/** The version, the content (unless deferred), the activity line, the guard's owed check and the node's new
 *  checksum in one statement (data-modifying CTEs), written out: built with the query builder, this statement
 *  cost Kiln more CPU per save than any other step of it (~165 µs on the bench machine). Its text depends only on which parts it has, so
 *  each shape is prepared once per connection. */
function saveStatement(r: SaveRows, content: ContentWrite | null) {
  const v = r.version;
  const n = r.node;
  const parts = [
    sql`with v as (insert into versions (node_id, backup_number, is_diff, html, diff_content, diff_from_id, snapshot_id,
      content_hash, size, saved_by_kind, saved_by_account_id, created_at)
      values (${v.node_id}, ${v.backup_number}, ${v.is_diff}, ${v.html ?? null}, ${v.diff_content ?? null},
      ${v.diff_from_id ?? null}, ${v.snapshot_id ?? null}, ${v.content_hash}, ${v.size}, ${v.saved_by_kind},
      ${v.saved_by_account_id ?? null}, ${v.created_at}) returning id)`,
  ];
  if (content && 'layout' in content) {
    const c = spliceColumns(content.layout.regions, content.bytes);
    parts.push(sql`, c as (update node_contents set splice_at = ${c.splice_at}, splice_end = ${c.splice_end},
      splice = ${c.splice}, splice_map = ${c.splice_map} where node_id = ${n.id})`);
  } else if (content)
    parts.push(sql`, c as (insert into node_contents (node_id, base) values (${n.id}, ${content.whole})
      on conflict (node_id) do update set base = excluded.base, splice_at = null, splice_end = null, splice = null,
      splice_map = null)`);
  if (r.activity) {
    const a = activityValues(r.activity);
    parts.push(sql`, a as (insert into activity (owner_id, at, kind, node_id, node_type, path, old_path, writer, client,
      detail) values (${a.owner_id}, ${a.at}, ${a.kind}, ${a.node_id}, ${a.node_type}, ${a.path}, ${a.old_path},
      ${a.writer}, ${a.client}, ${a.detail}))`);
  }
  if (r.check) {
    const g = r.check;
    parts.push(sql`, g as (insert into data_loss_checks (version_id, node_id, before_version_id, by_kind, by_trigger,
      writer, created_at) select id, ${n.id}, ${g.before_version_id ?? null}, ${g.by_kind}, ${g.by_trigger ?? null},
      ${g.writer ?? null}, ${g.created_at} from v)`);
  }
  parts.push(sql`, n as (update nodes set checksum = ${n.checksum}, size = ${r.bytes.length}, modified_at = ${n.now},
    saved_by_account_id = ${n.accountId}, saved_by_writer = ${n.writer} where id = ${n.id})
    select id from v`);
  return sql<{ id: number }>`${sql.join(parts, sql``)}`;
}
