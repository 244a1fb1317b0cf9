// The sync API's reads: the listing of a scope's tree and one file's content.
import { LAST_SYNCED_SQL, syncRowsOf } from '../store/nodes.ts';
import type { NodeType } from '../store/schema.ts';
import { badRequest } from '../errors.ts';
import { checksum as checksumOf } from '../core/checksum.ts';
import { documentContent } from '../nodes/serve.ts';
import type { SyncCtx } from './scope.ts';
import { analyzeTree, fileVersion, versioned } from './structure.ts';
import { type WireNode, nodeNotFound, scopedNode } from './wire.ts';
import { underFolder } from '../nodes/open.ts';

/** GET <base>/status: the scope's account and the server's time. */
export async function syncStatus(ctx: SyncCtx<'clock'>) {
  const { account } = ctx.sync;
  return {
    success: true as const,
    serverTime: ctx.clock.now().toISOString(),
    username: account.username,
    accountId: account.id,
  };
}

/** GET <base>/nodes: every node of the scope's account, each folder before what it holds. */
export async function listSyncNodes(ctx: SyncCtx<'database' | 'clock'>) {
  const serverTime = ctx.clock.now().toISOString();
  return { success: true as const, serverTime, complete: true as const, nodes: await wireNodesOf(ctx) };
}

/** The listing's nodes: one query (no ORDER BY: the tree order comes from the same grouping by parent that
 *  the structure versions need). */
async function wireNodesOf(ctx: SyncCtx<'database'>): Promise<WireNode[]> {
  // The rows come out in wire shape (aliases, lastSyncedAt computed in SQL): 10,000 nodes make 10,000
  // objects, not twice that, and each gets its etag and version in place.
  const rows = await syncRowsOf(ctx.database.db, ctx.sync.account.id, LAST_SYNCED_SQL);
  const { versions, ordered: all } = analyzeTree(rows);
  // A folder's agent key lists that folder and what it holds (the structure versions stay the whole tree's).
  const folder = ctx.sync.narrow?.folder ?? null;
  const ordered = folder ? all.filter((r) => underFolder(folder, r)) : all;
  const out = ordered as Array<(typeof ordered)[number] & { etag?: string | null; structureVersion?: string }>;
  for (const r of out) {
    r.etag = r.checksum;
    r.structureVersion = versions.get(r.id)!;
  }
  return out as WireNode[];
}

export interface ContentAnswer {
  success: true;
  nodeId: number;
  nodeType: NodeType;
  name: string;
  path: string;
  content: string;
  modifiedAt: string;
  checksum: string;
  etag: string;
  size: number;
  structureVersion: string;
}

/** A document's HTML (text) or an upload's bytes (base64), with the checksum of exactly those bytes. */
export async function readSyncContent(
  ctx: SyncCtx<'nodes' | 'documents' | 'metrics' | 'database' | 'blobs'>,
  input: { nodeId: number },
): Promise<ContentAnswer> {
  const node = await scopedNode(ctx, input.nodeId, 'view');
  let bytes: Buffer;
  let sum: string;
  if (node.type === 'site') {
    const stored = await documentContent(ctx, node);
    if (!stored) throw nodeNotFound();
    ({ bytes, checksum: sum } = stored);
  } else if (node.type === 'upload') {
    const blob = node.blob_sha256 ? await ctx.blobs.get(node.blob_sha256) : null;
    if (!blob) throw nodeNotFound();
    bytes = blob;
    sum = checksumOf(blob);
  } else {
    throw badRequest('Folders have no content; list the nodes to see what a folder holds.', 'not-a-file');
  }
  return {
    success: true,
    nodeId: node.id,
    nodeType: node.type,
    name: node.name,
    path: node.path,
    content: node.type === 'upload' ? bytes.toString('base64') : bytes.toString('utf8'),
    modifiedAt: node.modified_at,
    checksum: sum,
    etag: sum,
    size: bytes.length,
    structureVersion: fileVersion(versioned({ ...node, checksum: sum })),
  };
}
