// The `document` block of GET /_/meta: what the caller may do with the document a page names (its
// Document-URL), as the access table says, with the bounds a save and an upload are held to.
import type { Ctx } from '../context.ts';
import { documentPathOf } from './document-url.ts';
import { findByPath } from '../nodes/tree.ts';
import { limits } from '../limits.ts';
import { effectivePlan, uploadLimit } from '../billing/plans.ts';
import { planRow } from '../store/accounts.ts';

/** The document named by `url` on the caller's host (`host`: the request's host name), as far as the caller
 *  may see it; undefined otherwise (withheld by omission), and for a malformed URL. */
export async function documentMeta(ctx: Ctx, input: { url: string | undefined; host: string }) {
  const accountId = ctx.caller.host;
  if (!input.url || accountId === null) return undefined;
  try {
    const { host, path } = documentPathOf(input.url);
    const node = host === input.host.toLowerCase() ? await findByPath(ctx, accountId, path) : undefined;
    if (node?.type !== 'site' || !(await ctx.nodes.may(node, 'view'))) return undefined;
    const owner = await planRow(ctx.database.db, node.owner_id);
    const ownerPlan = owner
      ? effectivePlan({ plan: owner.plan, hasActiveSubscription: owner.has_active_subscription === 1 })
      : 'free';
    return {
      writable: await ctx.nodes.may(node, 'save'),
      etag: node.checksum,
      maxBytes: limits.documentSize,
      // Whether this caller may upload beside the page (the access table: a share guest may save but
      // not upload), and the file size uploads are held to: its owner's plan's, a fact stated to every
      // reader (hyperclay-local's host conformance page reads it).
      upload: { allowed: await ctx.nodes.may(node, 'upload'), maxBytes: uploadLimit(ctx, ownerPlan) },
    };
  } catch {
    // A malformed Document-URL only means no document block.
    return undefined;
  }
}
