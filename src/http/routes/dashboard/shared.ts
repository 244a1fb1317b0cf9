// What the dashboard's route groups share: the gates every handler passes, and how an operation's
// result is presented (the node list re-rendered for AJAX, a redirect with a message for browsers).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { Actor } from '../../../access/actor.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { notFound } from '../../../errors.ts';
import { isUnlimitedSites, limits } from '../../../limits.ts';
import { uploadLimit } from '../../../billing/plans.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { collectionFoldersOf } from '../../../store/collections.ts';
import { pendingGuardNodes } from '../../../store/guards.ts';
import { listTree } from '../../../nodes/tree.ts';
import type { NodeRow } from '../../../store/schema.ts';
import { treeOwner, type TreeOwner } from '../../../nodes/manage.ts';
import { nodeListHtml, type ListView } from '../../../ui/dashboard.ts';
import { assertSameOrigin } from '../../origin.ts';
import { withMessage } from '../../messages.ts';
import { backWithRefusal, wantsHtml } from '../../io.ts';

export const DASHBOARD = '/_/dashboard';

/** The dashboard lives on the main app; on a document host its GET is sent there. */
export function mainOnly(req: FastifyRequest) {
  if (req.site.kind !== 'main') throw notFound();
}

/** Signed in and allowed to manage a tree (developers; app users get 403, strangers 401). */
export function manager(req: FastifyRequest): Actor {
  mainOnly(req);
  assertSameOrigin(req);
  return authorizeActor({ actor: req.actor }, null, 'manage');
}

/** What the list shows besides the nodes: the owner's host, and its plan's limits. */
export async function listView(s: Services, owner: TreeOwner, nodes: NodeRow[]): Promise<ListView> {
  return {
    nodes,
    collections: await collectionFoldersOf(s.database.db, owner.id),
    dataLoss: await pendingGuardNodes(s.database.db, owner.id),
    // The code editor opens one's own text uploads (src/http/routes/editor.ts).
    uploadsEditor: owner.own ? `/_/edit/uploads/${encodeURIComponent(owner.username)}` : null,
    hostUrl: documentHostUrl(s.config, owner.username),
    siteLimit: owner.unlimited || isUnlimitedSites(owner.plan) ? null : limits.sites[owner.plan],
    uploadLimit: uploadLimit(s, owner.plan),
    ownerId: owner.id,
  };
}

/** The dashboard page of a tree: the actor's own, or `?team=<name>`. */
export function dashboardOf(owner: TreeOwner, actor: Actor): string {
  return owner.id === actor.accountId ? DASHBOARD : `${DASHBOARD}?team=${encodeURIComponent(owner.username)}`;
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
  s: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  op: (actor: Actor) => Promise<OpResult>,
) {
  let result: OpResult;
  let actor: Actor;
  try {
    actor = manager(req);
    result = await op(actor);
  } catch (err) {
    // Browser form posts come back to the dashboard with the refusal; sign-in goes to the login page.
    const back = backWithRefusal(req, reply, err, DASHBOARD);
    if (back) return back;
    throw err;
  }
  const owner = await treeOwner(s, actor, result.node?.owner_id ?? result.ownerId);
  if (wantsHtml(req))
    return reply.redirect(withMessage(s.secret, dashboardOf(owner, actor), result.msg, 'success'), 302);
  const nodes = await listTree(s, actor.accountId, owner.id);
  return reply.code(result.status ?? 200).send({
    msg: result.msg,
    msgType: 'success',
    html: nodeListHtml(await listView(s, owner, nodes)),
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
