// The dashboard's actions on one node that other modules carry out (apps, collections, duplicates,
// downloads): each opens the node for `manage` through the access table first (`ctx.nodes.open`: 404 for a
// node the caller may not see, 403 `viewer` for a team's viewer, 400 `not-owner` for another account's public
// one), then hands it on. One use case per route (src/http/routes/dashboard/).
import type { Ctx } from '../context.ts';
import { badRequest, notFound } from '../errors.ts';
import { setEnableSignups } from '../apps/apps.ts';
import { collectionOf, markCollection, setLimits, unmarkCollection } from '../collections/collections.ts';
import { duplicateDocument } from './duplicate.ts';
import { documentContent } from './serve.ts';
import { listTree, type NodeRow } from './tree.ts';
import { accountById } from '../store/accounts.ts';

/** A document becomes a multi-tenant app (or stops taking signups), with the username of the host it is on (a
 *  team's app signs its visitors up on the team's host, not on the caller's). */
export async function makeApp(
  ctx: Ctx,
  input: { nodeId: number; enableSignups: boolean },
): Promise<{ node: NodeRow; hostUsername: string }> {
  const node = await setEnableSignups(ctx, { nodeId: input.nodeId, enable: input.enableSignups });
  return { node, hostUsername: (await accountById(ctx.database.db, node.owner_id))?.username ?? '' };
}

/** A copy of a document beside it. */
export async function duplicate(ctx: Ctx, input: { nodeId: number }): Promise<{ node: NodeRow; copy: NodeRow }> {
  const node = await ctx.nodes.open(input.nodeId, 'manage');
  return { node, copy: await duplicateDocument(ctx, node) };
}

/** The stored bytes of a document or upload (404 for a folder, or bytes no longer kept). */
export async function download(ctx: Ctx, input: { nodeId: number }): Promise<{ node: NodeRow; bytes: Buffer }> {
  const node = await ctx.nodes.open(input.nodeId, 'manage');
  const bytes =
    node.type === 'site'
      ? (await documentContent(ctx, node))?.bytes
      : node.type === 'upload' && node.blob_sha256
        ? await ctx.blobs.get(node.blob_sha256)
        : null;
  if (!bytes) throw notFound();
  return { node, bytes };
}

/** What deleting a node would take along: for the confirmation page of a non-empty folder. */
export async function deletionOf(ctx: Ctx, input: { nodeId: number }): Promise<{ node: NodeRow; count: number }> {
  const node = await ctx.nodes.open(input.nodeId, 'manage');
  if (node.type !== 'folder') return { node, count: 0 };
  const prefix = node.path ? `${node.path}/${node.name}` : node.name;
  const all = await listTree(ctx, { ownerId: node.owner_id });
  return { node, count: all.filter((n) => n.path === prefix || n.path.startsWith(`${prefix}/`)).length };
}

/** A folder takes anonymous submissions (a collection), or stops. */
export async function setCollection(ctx: Ctx, input: { nodeId: number; on: boolean }): Promise<NodeRow> {
  const folderId = input.nodeId;
  return input.on ? (await markCollection(ctx, { folderId })).folder : unmarkCollection(ctx, { folderId });
}

/** A collection's facts and usage (404 when the folder is none). */
export async function collectionInfo(ctx: Ctx, input: { nodeId: number }) {
  const { folder: node, info } = await collectionOf(ctx, { folderId: input.nodeId });
  if (!info) throw notFound('That folder is not a collection.');
  const owner = await accountById(ctx.database.db, node.owner_id);
  return { node, info: { ...info, ownerUsername: owner?.username ?? '' } };
}

/** What a collection's anonymous submitters may store. */
export async function collectionLimits(
  ctx: Ctx,
  input: { nodeId: number; maxRecords: number; maxMegabytes: number; maxPerAddressHour: number },
) {
  const { folder: node, set } = await setLimits(ctx, {
    folderId: input.nodeId,
    maxRecords: input.maxRecords,
    maxBytes: Math.round(input.maxMegabytes * 1024 * 1024),
    maxPerAddressHour: input.maxPerAddressHour,
  });
  return { node, set };
}

/** Only documents are shared: the document, for its sharing page and changes. */
export async function shareableDocument(ctx: Ctx, input: { nodeId: number }): Promise<NodeRow> {
  const node = await ctx.nodes.open(input.nodeId, 'manage');
  if (node.type !== 'site') throw badRequest('Only documents can be shared.', 'not-a-document');
  return node;
}
