// What the dashboard's route groups share: the gates every handler passes, the inputs they all read, and how an
// operation's result is presented (the node list re-rendered for AJAX, a redirect with a message for browsers).
// Who may do what is the use cases' (src/nodes/, through the caller's ctx); the gate here only keeps the order
// a browser relies on: the main app, the same origin, a signed-in person, then the input.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Ctx } from '../../../context.ts';
import { notFound } from '../../../errors.ts';
import type { NodeRow } from '../../../nodes/tree.ts';
import { signedIn, treeOwner, type TreeOwner } from '../../../nodes/manage.ts';
import { treeView } from '../../../nodes/tree-view.ts';
import { nodeListHtml } from '../../../ui/dashboard.ts';
import { assertSameOrigin } from '../../origin.ts';
import { withMessage } from '../../messages.ts';
import { backWithRefusal, wantsHtml } from '../../io.ts';

export const DASHBOARD = '/_/dashboard';

/** A node's id in the path: a malformed one is no node (0: 404, as an unknown one). */
const nodeId = z
  .string()
  .regex(/^\d{1,15}$/)
  .transform(Number)
  .catch(0);
export const nodeParams = z.object({ id: nodeId });

/** `?team=<name>`: a team's tree (given twice or empty: the caller's own); other fields (a redirect's signed
 *  message) pass through. */
export const teamQuery = z.looseObject({ team: z.string().optional().catch(undefined) });

/** The dashboard lives on the main app; on a document host its GET is sent there. */
export function mainOnly(req: FastifyRequest) {
  if (req.site.kind !== 'main') throw notFound();
}

/** Signed in and allowed to manage a tree (developers; app users get 403, strangers 401), on the main app, from
 *  its own pages. Then the route's schema: a refused field comes after who is asking (`attachValidation`). */
export function manager(req: FastifyRequest) {
  mainOnly(req);
  assertSameOrigin(req);
  const actor = signedIn(req.ctx, 'manage');
  if (req.validationError) throw req.validationError;
  return actor;
}

/** The dashboard page of a tree: the caller's own, or `?team=<name>`. */
export function dashboardOf(owner: TreeOwner): string {
  return owner.own ? DASHBOARD : `${DASHBOARD}?team=${encodeURIComponent(owner.username)}`;
}

/** What an operation answers: the message, the node it made or changed, or (without one) whose tree. */
export interface OpResult {
  msg: string;
  node?: NodeRow;
  status?: number;
  ownerId?: number;
}

/** Runs one operation and shapes the answer: JSON with the fresh node list, or a 302 for browsers. */
export async function operate(
  req: FastifyRequest,
  reply: FastifyReply,
  op: (ctx: Ctx, me: ReturnType<typeof manager>) => Promise<OpResult>,
) {
  let result: OpResult;
  try {
    result = await op(req.ctx, manager(req));
  } catch (err) {
    // Browser form posts come back to the dashboard with the refusal; sign-in goes to the login page.
    const back = backWithRefusal(req, reply, err, DASHBOARD);
    if (back) return back;
    throw err;
  }
  const ref = result.node?.owner_id ?? result.ownerId;
  if (wantsHtml(req)) {
    const page = dashboardOf(await treeOwner(req.ctx, ref));
    return reply.redirect(withMessage(req.ctx.secret, page, result.msg, 'success'), 302);
  }
  return reply.code(result.status ?? 200).send({
    msg: result.msg,
    msgType: 'success',
    html: nodeListHtml(await treeView(req.ctx, ref)),
    ...(result.node ? { node: publicNode(result.node) } : {}),
  });
}

/** The node fields an API client sees (camelCase, booleans). */
export function publicNode(n: NodeRow) {
  return {
    id: n.id,
    type: n.type,
    name: n.name,
    parentId: n.parent_id,
    path: n.path,
    size: n.size,
    checksum: n.checksum,
    visibility: n.visibility,
    enableSignups: n.enable_signups === 1,
    sourceNodeId: n.source_node_id,
    modifiedAt: n.modified_at,
    createdAt: n.created_at,
  };
}
