// The data-clobber guard's doors (src/guard/guard.ts), as use cases: the pending event of a document, and the
// owner's choice. Both are the `versions` row of the table (whoever may look back on the document and restore):
// to anyone else the panel shows nothing, and a choice is the table's refusal. Restore and revert are saves
// through THE pipeline, by the caller.
import type { Ctx } from '../context.ts';
import type { Services } from '../services.ts';
import type { Row } from '../store/schema.ts';
import type { Choice } from '../guard/guard.ts';
import { badRequest, KilnError, notFound } from '../errors.ts';
import { exactly } from '../core/conditional.ts';
import { saveDocument } from '../save/pipeline.ts';

/** A document named by its path on the host (null: the request named none, or another host's). */
export interface LossInput {
  host: number;
  path: string | null;
}

/** The document at the path, when the caller may see it; else null (missing, private, not a document). */
async function documentSeen(ctx: Pick<Ctx, 'nodes'>, input: LossInput): Promise<Row<'nodes'> | null> {
  if (input.path === null) return null;
  try {
    const node = await ctx.nodes.open({ ownerId: input.host, path: input.path }, 'view');
    return node.type === 'site' ? node : null;
  } catch (err) {
    if (err instanceof KilnError && err.status === 404) return null;
    throw err;
  }
}

/** The pending event, for whoever may resolve it; null for anyone else and for no document. */
export async function pendingLoss(ctx: Pick<Ctx, 'nodes' | 'guard'>, input: LossInput) {
  const node = await documentSeen(ctx, input);
  if (!node || !(await ctx.nodes.may(node, 'versions'))) return { event: null };
  return { event: await ctx.guard.pending(node) };
}

const CHOICES: readonly Choice[] = ['restore', 'revert', 'dismiss'];

/** The owner's choice on the event `id` (null: the pending one). */
export async function resolveLoss(
  ctx: Pick<Ctx, 'caller' | 'nodes'> & Services,
  input: LossInput & { id: string | null; choice: string },
) {
  if (input.path === null) throw badRequest('file required', 'missing-document-url');
  // A name that is no document the caller may see answers as a missing one.
  const node = await ctx.nodes.open({ ownerId: input.host, path: input.path }, 'view');
  if (node.type !== 'site') throw notFound();
  await ctx.nodes.check(node, 'versions');
  // What the choice says is judged once the caller may make one: a stranger learns nothing from a bad one.
  const choice = CHOICES.find((c) => c === input.choice);
  if (!choice) throw badRequest('choice must be dismiss | revert | restore', 'invalid');
  const actor = ctx.caller.actor;
  const by = { kind: 'restore' as const, accountId: actor?.accountId ?? null, writer: actor?.writer ?? null };
  return ctx.guard.resolve(node, input.id, choice, by.writer, (bytes, ifMatch) =>
    saveDocument(ctx, { nodeId: node.id, bytes, by, ifMatch: exactly(ifMatch) }),
  );
}
