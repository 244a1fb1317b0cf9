// The trash. Every deletion (dashboard, sync API) puts the node and what it held in the trash instead of
// removing them: the rows stay, with their content, versions and blobs, and `trashed_at` set, so every
// reader of live nodes passes them by and their names block nothing. For 30 days the owner (or a
// team's owners and editors) may restore a deletion whole, or purge it; a sweep purges what is older.
import type { Services } from '../services.ts';
import type { Ctx } from '../context.ts';
import { KilnError, conflict, notFound } from '../errors.ts';
import { DAY } from '../limits.ts';
import { assertSiteQuota } from '../billing/plans.ts';
import { isGlobalDocumentName } from '../core/names.ts';
import { publishNodeSaved } from '../events/publish.ts';
import {
  deleteNodes,
  nodeById,
  siteNameClash,
  siblingNamed,
  trashRootsBefore,
  trashRootsOf,
  trashedWith,
  untrashNodes,
  updateNode,
} from '../store/nodes.ts';
import { childPathOf, rewriteDescendantPaths, treeWrite, type NodeRow } from './tree.ts';
import { treeOwner, type TreeCtx } from './manage.ts';

/** How long a deletion stays restorable. */
export const TRASH_DAYS = 30;
const NOT_IN_TRASH = 'That is not in the trash (restored, purged, or never deleted).';

export interface TrashEntry {
  node: NodeRow;
  /** Items it took along (a folder's contents), not counting itself. */
  inside: number;
  /** When it will be purged (ISO). */
  purgeAt: string;
}

/** The trash of a tree the caller may change (treeOwner), newest deletion first. */
export async function listTrash(ctx: TreeCtx, input: { ownerId: number }): Promise<TrashEntry[]> {
  const { ownerId } = input;
  await treeOwner(ctx, ownerId);
  const rows = await trashRootsOf(ctx.database.db, ownerId);
  return rows.map(({ items, ...node }) => ({
    node: node as NodeRow,
    inside: Math.max(0, Number(items) - 1),
    purgeAt: new Date(Date.parse(node.trashed_at!) + TRASH_DAYS * DAY).toISOString(),
  }));
}

/** The deletion `rootId`, with what it took along, when the caller may change its tree (treeOwner: a viewer
 *  403 `viewer`); 404 when there is none, or it is of a tree the caller has nothing to do with. A trashed node
 *  is no node `ctx.nodes.open` finds: its tree is the question. */
async function deletion(ctx: TreeCtx, rootId: number) {
  const all = await trashedWith(ctx.database.db, rootId);
  const root = all[0];
  if (!root || root.id !== rootId) throw notFound(NOT_IN_TRASH);
  try {
    await treeOwner(ctx, root.owner_id);
  } catch (err) {
    if (err instanceof KilnError && err.status === 404) throw notFound(NOT_IN_TRASH);
    throw err;
  }
  return root;
}

/** The deletion, read again inside the change's transaction. */
async function deletionIn(trx: Parameters<typeof trashedWith>[0], rootId: number) {
  const all = await trashedWith(trx, rootId);
  if (!all[0] || all[0].id !== rootId) throw notFound(NOT_IN_TRASH);
  return { root: all[0], all };
}

/** Puts a deletion back: into the folder it was in when that folder still exists, else the top level.
 *  Refused (409) when a live node has taken its name there meanwhile, or (403) past the plan's count. */
export async function restoreFromTrash(ctx: Ctx, input: { rootId: number; writer?: string | null }): Promise<NodeRow> {
  const s = ctx;
  const { rootId } = input;
  const writer = input.writer !== undefined ? input.writer : (ctx.caller.actor?.writer ?? null);
  await deletion(ctx, rootId);
  return treeWrite(s, async (trx, after) => {
    await s.database.lock.row(trx, 'nodes', rootId);
    const { root, all } = await deletionIn(trx, rootId);
    const folder = root.trashed_parent_id ? await nodeById(trx, root.trashed_parent_id) : undefined;
    const parent = folder?.type === 'folder' && folder.owner_id === root.owner_id ? folder : null;
    const where = parent ? `"${childPathOf(parent)}"` : 'the top level';
    const taken = await siblingNamed(trx, root.owner_id, parent?.id ?? 0, root.name);
    if (taken)
      throw conflict(`Something named "${root.name}" is in ${where} now: rename or delete it first.`, 'name-conflict');
    for (const n of all) {
      if (n.type !== 'site' || !isGlobalDocumentName(n.name)) continue;
      if (await siteNameClash(trx, n.owner_id, n.name, n.id))
        throw conflict(`The document name "${n.name}" was taken meanwhile: rename that one first.`, 'name-conflict');
    }
    const sites = all.filter((n) => n.type === 'site').length;
    if (sites > 0) await assertSiteQuota(s, trx, root.owner_id, sites);
    await untrashNodes(
      trx,
      all.map((n) => n.id),
    );
    const restored = await updateNode(trx, root.id, { parent_id: parent?.id ?? 0, path: childPathOf(parent) });
    if (restored.type === 'folder') await rewriteDescendantPaths(trx, restored);
    // To sync clients the restored nodes are new: the folder first, then what it holds.
    const fresh = [restored, ...all.slice(1)];
    after.push(async () => {
      for (const n of fresh) {
        const live = n.id === restored.id ? restored : ((await nodeById(s.database.db, n.id)) ?? n);
        await publishNodeSaved(
          s,
          live,
          { checksum: live.checksum, size: live.size, modifiedAt: live.modified_at },
          { writer },
        );
      }
    });
    return restored;
  });
}

/** Deletes a deletion for good: rows, content and versions (blobs no row names are swept later). */
export async function purgeFromTrash(ctx: Ctx, { rootId }: { rootId: number }): Promise<NodeRow> {
  await deletion(ctx, rootId);
  return treeWrite(ctx, async (trx) => {
    const { root, all } = await deletionIn(trx, rootId);
    await deleteNodes(
      trx,
      all.map((n) => n.id),
    );
    return root;
  });
}

/** Purges every deletion in a tree's trash; returns how many. */
export async function emptyTrash(ctx: Ctx, input: { ownerId: number }): Promise<number> {
  const entries = await listTrash(ctx, input);
  for (const e of entries) await purgeFromTrash(ctx, { rootId: e.node.id });
  return entries.length;
}

/** The background sweep: purges deletions older than 30 days (in batches); returns how many. */
export async function sweepTrash(s: Services): Promise<number> {
  const before = new Date(s.clock.now().getTime() - TRASH_DAYS * DAY).toISOString();
  let purged = 0;
  for (;;) {
    const roots = await trashRootsBefore(s.database.db, before);
    if (roots.length === 0) return purged;
    for (const r of roots) {
      await treeWrite(s, async (trx) => {
        const all = await trashedWith(trx, r.id);
        await deleteNodes(
          trx,
          all.map((n) => n.id),
        );
      });
      purged++;
    }
  }
}
