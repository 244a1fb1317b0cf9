// The sync API's create: a file or folder by name or nested path, or the account's own node of that
// name reused (write rule 3), all in one transaction through the tree, the save pipeline and the
// upload writer.
//
// Access is decided once, by the request's scope (src/sync/scope.ts: the key's own account, or a team where the
// table lets its role sync), and the plan with it (`canWrite`). The names are looked up once, here (rule 3
// needs what is there: reuse it or refuse); the tree's `createIn` is told both (`known`) and only inserts.
// From the route to the store: sync-api.ts → sync/create.ts → store/nodes.ts (the parent, the names on the
// path) → nodes/tree.ts createIn → store/nodes.ts insertNode → save/pipeline.ts (a document's first HTML).
import type { NodeType, NodeRow } from '../store/schema.ts';
import { KilnError, badRequest } from '../errors.ts';
import { checksum as checksumOf } from '../core/checksum.ts';
import type { IfMatch } from '../core/conditional.ts';
import { isGlobalDocumentName, nodeNameProblem } from '../core/names.ts';
import { writeDocument as writeDocumentIn } from '../save/pipeline.ts';
import { createIn, nameConflict } from '../nodes/tree.ts';
import { childPathOf } from '../nodes/find.ts';
import { insertUpload, replaceUpload, storeBytes, type StoredBytes } from '../uploads/upload.ts';
import { inTransaction, type AfterCommit, type Tx } from '../store/transaction.ts';
import { assertCanWrite, type SyncCtx } from './scope.ts';
import { childNamed, siteNameClash } from '../store/nodes.ts';
import {
  type Precondition,
  type WireNode,
  by,
  contentBytes,
  freshWireNode,
  markSynced,
  run,
  scopedFolder,
  uploadWriter,
} from './wire.ts';

export interface CreateInput {
  type: NodeType;
  /** A name, or a path of folders ending in the name (`a/b/c.html`). */
  name: string;
  /** The folder it goes in; 0: the top level. */
  parentId: number;
  /** HTML text for documents, base64 for uploads; none: an empty file. */
  content?: string | null;
  ifMatch: IfMatch;
  ifNoneMatch: Precondition;
}

/** Rule 3's refusals: final, so never retried (a concurrent writer's 409 is). */
const final = new WeakSet<KilnError>();

function nameTaken(name: string, detail: string): KilnError {
  const err = new KilnError(409, `The name "${name}" is already taken${detail}.`, 'name-conflict');
  final.add(err);
  return err;
}

/** Creates a node, or reuses the account's own node of that name (write rule 3):
 *  - `name` may be a path (`folder/sub/name.html`): missing folders are created, existing ones reused;
 *  - a document name owned by another account answers 409 `name-conflict` ("already taken");
 *  - the account's own document of that name (in any folder, where it stays), or its own folder/upload
 *    of that name in the target folder, is reused: the content (when sent) is written to it through the
 *    same rules as PUT, and the answer is 200 instead of 201 (a team's file with other bytes and no
 *    If-Match is 409 `name-conflict` instead: team writes are never blind);
 *  - two creators of one name at once: one creates, the other reuses;
 *  - `If-None-Match: *` answers 412 when the name exists (nothing is written).
 *  Answers `{node, created}`. */
export async function createSyncNode(ctx: SyncCtx, input: CreateInput): Promise<{ node: WireNode; created: boolean }> {
  const { type } = input;
  assertCanWrite(ctx.sync);
  const segments = input.name
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map((p) => p.normalize('NFC'));
  for (const [i, seg] of segments.entries()) {
    const problem = nodeNameProblem(seg, i === segments.length - 1 ? type : 'folder');
    if (problem) throw badRequest(segments.length > 1 ? `${problem} (in "${seg}")` : problem, 'invalid-name');
  }
  const bytes =
    type === 'folder' || input.content === undefined || input.content === null
      ? null
      : contentBytes(input.content, type);
  // An upload's bytes go to the blob store before the transaction (durable first, and no file I/O
  // while the transaction holds the database).
  const stored = type === 'upload' && bytes ? await storeBytes(ctx, ctx.sync.account.plan, bytes) : null;
  return run(async () => {
    // Two creators of one name at once: the loser of the unique index tries again and reuses.
    for (let attempt = 0; ; attempt++) {
      try {
        const made = await inTransaction(ctx, (tx, after) =>
          createOnce(ctx, { tx, after }, { ...input, segments, bytes, stored }),
        ).catch(nameConflict);
        return { node: await freshWireNode(ctx, made.id), created: made.created };
      } catch (err) {
        if (attempt < 3 && err instanceof KilnError && err.code === 'name-conflict' && !final.has(err)) continue;
        throw err;
      }
    }
  });
}

/** The create, in one transaction: the folders of the path, then the leaf (new or reused). A refusal
 *  anywhere leaves nothing behind. */
async function createOnce(
  ctx: SyncCtx,
  t: { tx: Tx; after: AfterCommit },
  input: CreateInput & { segments: string[]; bytes: Buffer | null; stored: StoredBytes | null },
): Promise<{ id: number; created: boolean }> {
  const { tx, after } = t;
  const { sync: scope } = ctx;
  const { type, segments, bytes, stored } = input;
  const leaf = segments[segments.length - 1];
  const writer = scope.actor.writer;
  const now = ctx.clock.now().toISOString();
  const touched: number[] = [];
  // The folders of the path: reuse what exists, create what is missing.
  let parent = await scopedFolder(ctx, tx, input.parentId);
  for (const folderName of segments.slice(0, -1)) {
    const existing = await childNamed(tx, scope.account.id, parent?.id ?? 0, folderName);
    if (existing && existing.type !== 'folder')
      throw nameTaken(folderName, ` by a ${existing.type === 'site' ? 'document' : 'file'} in this folder`);
    if (existing) parent = existing;
    else {
      const folder = {
        ownerId: scope.account.id,
        parentId: parent?.id ?? 0,
        type: 'folder' as const,
        name: folderName,
        writer,
      };
      parent = await createIn(ctx, tx, scope.actor.accountId, folder, now, after, { parent });
      touched.push(parent.id);
    }
  }
  const parentId = parent?.id ?? 0;

  // Rule 3: the leaf name.
  let reuse: NodeRow | undefined;
  if (type === 'site' && isGlobalDocumentName(leaf)) {
    const site = await siteNameClash(tx, scope.account.id, leaf);
    if (site && site.owner_id !== scope.account.id)
      throw nameTaken(leaf, ' by another account; document names are unique across this Kiln');
    reuse = site;
  }
  const same = await childNamed(tx, scope.account.id, parentId, leaf);
  if (same && same.type !== type)
    throw nameTaken(
      leaf,
      ` by a ${same.type === 'site' ? 'document' : same.type === 'folder' ? 'folder' : 'file'} in this folder`,
    );
  reuse ??= same;
  // A same-named document elsewhere in the account (names unique across Kiln) is outside a folder's agent key.
  if (reuse && scope.narrow) await ctx.nodes.check(reuse, 'view');

  if (reuse) {
    if (input.ifNoneMatch.kind !== 'none') {
      throw new KilnError(
        412,
        `"${reuse.name}" already exists${reuse.path ? ` in "${reuse.path}"` : ''}.`,
        'conflict',
        { etag: reuse.checksum },
      );
    }
    if (bytes && type !== 'folder') {
      // A team's file is never overwritten blindly: a create that names one with other bytes and no
      // If-Match is a name conflict (the engine records it; nothing is lost). Same bytes: a no-op.
      if (scope.account.kind === 'team' && input.ifMatch.kind === 'none' && checksumOf(bytes) !== reuse.checksum) {
        throw nameTaken(reuse.name, ' in this team by a file with other content (send If-Match to replace it)');
      }
      if (type === 'site')
        await writeDocumentIn(ctx, tx, after, { nodeId: reuse.id, bytes, by: by(scope), ifMatch: input.ifMatch });
      else
        await replaceUpload(
          ctx,
          {
            node: reuse,
            plan: scope.account.plan,
            bytes: stored!,
            by: uploadWriter(scope),
            ifMatch: input.ifMatch,
          },
          t,
        );
    }
    await markSynced(tx, [...touched, reuse.id], now);
    return { id: reuse.id, created: false };
  }

  const node =
    type === 'upload'
      ? await insertUpload(
          ctx,
          {
            ownerId: scope.account.id,
            parentId,
            parentPath: childPathOf(parent),
            name: leaf,
            stored: stored ?? (await storeBytes(ctx, scope.account.plan, Buffer.alloc(0))),
            by: uploadWriter(scope),
            ifTaken: 'refuse',
          },
          t,
        )
      : await createIn(
          ctx,
          tx,
          scope.actor.accountId,
          {
            ownerId: scope.account.id,
            parentId,
            type,
            name: leaf,
            html: type === 'site' && bytes ? bytes : undefined,
            writer,
          },
          now,
          after,
          { parent },
        );
  touched.push(node.id);
  await markSynced(tx, touched, now);
  return { id: node.id, created: true };
}
