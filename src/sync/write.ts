// The sync API's content writes: documents through the save pipeline, uploads through the upload
// writer (src/uploads/upload.ts), so versions, the stylesheet and the events are those of any writer.
import type { Services } from '../services.ts';
import { badRequest } from '../errors.ts';
import type { IfMatch } from '../core/conditional.ts';
import { broadcastSnapshot } from '../events/publish.ts';
import { saveDocument } from '../save/pipeline.ts';
import type { NodeRow } from '../store/schema.ts';
import { replaceUpload } from '../uploads/upload.ts';
import { assertCanWrite, type SyncCtx, type SyncScope } from './scope.ts';
import { fileVersion, versioned } from './structure.ts';
import { assertConditional, by, contentBytes, run, scopedNode, uploadWriter } from './wire.ts';

export interface WriteInput {
  nodeId: number;
  /** HTML text for documents, base64 for uploads. */
  content: string;
  ifMatch: IfMatch;
  /** The page's live DOM, relayed to its other tabs with the sender's id (live sync). */
  snapshotHtml?: string;
  senderId?: string;
}

export interface WriteAnswer {
  success: true;
  nodeId: number;
  checksum: string;
  etag: string;
  size: number;
  modifiedAt: string;
  structureVersion: string;
  changed: boolean;
}

/** Writes the content of a document or upload. Rules: an `If-Match` equal to the stored checksum
 *  succeeds, another answers 412 {code:'conflict', etag, changedBy?} and changes nothing; without
 *  `If-Match` the content is replaced (team scopes: 428). `snapshotHtml` + `senderId` also go to the
 *  document's live lane and the owner's sync streams as a `live-sync` frame. */
export async function writeSyncContent(ctx: SyncCtx, input: WriteInput): Promise<WriteAnswer> {
  const scope = ctx.sync;
  const found = await scopedNode(ctx, input.nodeId, 'view');
  if (found.type === 'folder') throw badRequest('Folders have no content.', 'not-a-file');
  const node = await ctx.nodes.check(found, 'save');
  assertCanWrite(scope);
  assertConditional(scope, input.ifMatch.kind !== 'none', 'If-Match with the etag your copy is based on');
  const bytes = contentBytes(input.content, node.type);
  const snapshot = node.type === 'site' && input.snapshotHtml !== undefined && !!input.senderId;
  const answer =
    node.type === 'site'
      ? await writeDocument(ctx, scope, node, bytes, input.ifMatch, snapshot)
      : await writeUpload(ctx, scope, node, bytes, input.ifMatch);
  if (snapshot) {
    // Not awaited: a write never waits on the bus.
    broadcastSnapshot(ctx, { node, html: input.snapshotHtml!, sender: input.senderId!, toSyncStreams: true }).catch(
      (err) => console.error('publishing a live-sync snapshot failed:', err),
    );
  }
  return answer;
}

async function writeDocument(
  s: Services,
  scope: SyncScope,
  node: NodeRow,
  bytes: Buffer,
  ifMatch: IfMatch,
  snapshotSent: boolean,
): Promise<WriteAnswer> {
  const writer = { ...by(scope), snapshotSent };
  const result = await run(() => saveDocument(s, { nodeId: node.id, bytes, by: writer, ifMatch }));
  return answerFor(
    { ...node, checksum: result.checksum, size: result.size, modified_at: result.modifiedAt },
    result.changed,
  );
}

/** The answer to a content write: the node's new checksum (also its etag), size, time and version. */
function answerFor(n: NodeRow, changed: boolean): WriteAnswer {
  return {
    success: true,
    nodeId: n.id,
    checksum: n.checksum!,
    etag: n.checksum!,
    size: n.size,
    modifiedAt: n.modified_at,
    structureVersion: fileVersion(versioned(n)),
    changed,
  };
}

/** Replaces an upload's bytes through the one upload writer (If-Match in the statement). */
async function writeUpload(
  s: Services,
  scope: SyncScope,
  node: NodeRow,
  bytes: Buffer,
  ifMatch: IfMatch,
): Promise<WriteAnswer> {
  const { changed, node: n } = await run(() =>
    replaceUpload(s, { node, plan: scope.account.plan, bytes, by: uploadWriter(scope), ifMatch }),
  );
  return answerFor(n, changed);
}
