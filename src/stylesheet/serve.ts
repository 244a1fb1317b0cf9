// The utility stylesheet of a document on the caller's host, for whoever may view the document.
import type { Ctx } from '../context.ts';
import { findByPath } from '../nodes/tree.ts';

/** The stylesheet compiled for the document `<name>.html` (or `.htmlclay`) on the caller's host, with the
 *  checksum of the source it was compiled from; null before the first compile, for anything unknown, and
 *  for a document the caller may not view (owner, share guest, anyone when public may). */
export async function stylesheetOf(
  ctx: Ctx,
  input: { name: string },
): Promise<{ css: string; sourceChecksum: string } | null> {
  const accountId = ctx.caller.host;
  if (accountId === null) return null;
  for (const ext of ['.html', '.htmlclay']) {
    const node = await findByPath(ctx, accountId, input.name + ext).catch(() => undefined);
    if (node?.type !== 'site') continue;
    if (!(await ctx.nodes.may(node, 'view'))) return null;
    return (await ctx.stylesheets.stored(node.id)) ?? null;
  }
  return null;
}
