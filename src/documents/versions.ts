// A document's versions, on its host: the list, one version (with its listing), and restoring one as a new
// save through THE pipeline. Whoever may look back on the document (`versions` in the table: its owner, a
// team's owners and editors, an app user on their confirmed copy); a document the caller may not see, or a
// name that is no document of this host, answers 404 like a missing one.
import type { Ctx } from '../context.ts';
import type { Services } from '../services.ts';
import type { NodeRef } from '../nodes/open.ts';
import type { Row } from '../store/schema.ts';
import { notFound } from '../errors.ts';
import { listVersions, versionContent } from '../save/history.ts';
import { ROOT_DOCUMENT } from '../nodes/serve.ts';
import { saveDocument } from '../save/pipeline.ts';
import type { SavedBy } from '../save/saved.ts';
import type { IfMatch } from '../core/conditional.ts';

type VersionsCtx = Pick<Ctx, 'nodes' | 'database'>;

/** The document `ref` names, when it is one the caller may look back on. */
export async function versionedDocument(ctx: Pick<Ctx, 'nodes'>, ref: NodeRef): Promise<Row<'nodes'>> {
  // Seen first: a folder or an upload is no document (404), whoever asks.
  const node = await ctx.nodes.open(ref, 'view');
  if (node.type !== 'site') throw notFound();
  return ctx.nodes.check(node, 'versions');
}

/** The versions of the document at `path` of this host (`index.html` when none is named). */
export async function documentVersions(ctx: VersionsCtx, input: { host: number; path?: string }) {
  const node = await versionedDocument(ctx, { ownerId: input.host, path: input.path ?? ROOT_DOCUMENT });
  return { node, versions: await listVersions(ctx.database.db, node.id) };
}

/** One version: its bytes, its document and its listing. */
export async function versionOf(ctx: VersionsCtx, input: { id: number }) {
  const v = await versionContent(ctx.database.db, input.id);
  const node = await versionedDocument(ctx, v.nodeId);
  const info = (await listVersions(ctx.database.db, node.id)).find((x) => x.id === input.id)!;
  return { v, node, info };
}

/** Restores a version: a new save of its bytes, by the caller (the history names it a restore; an agent names
 *  itself, `by`), under `ifMatch` when given. */
export async function restoreVersion(
  ctx: Pick<Ctx, 'caller' | 'nodes'> & Services,
  input: { id: number; by?: SavedBy; ifMatch?: IfMatch },
) {
  const v = await versionContent(ctx.database.db, input.id);
  const node = await versionedDocument(ctx, v.nodeId);
  // Restoring changes the document: whoever may look back may, unless the credential only reads.
  await ctx.nodes.check(node, 'save');
  const actor = ctx.caller.actor;
  const result = await saveDocument(ctx, {
    nodeId: node.id,
    bytes: v.bytes,
    by: input.by ?? { kind: 'restore', accountId: actor?.accountId ?? null, writer: actor?.writer ?? null },
    ifMatch: input.ifMatch ?? null,
  });
  return { v, node, result };
}
