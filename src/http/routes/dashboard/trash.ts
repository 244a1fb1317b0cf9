// The trash (src/nodes/trash.ts): the list, restoring, purging and emptying.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Ctx } from '../../../context.ts';
import type { RoutePlugin } from '../plugin.ts';
import { backWithRefusal, id, queryMsg, queryText, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import type { NodeRow } from '../../../nodes/tree.ts';
import { signedIn, treeOwner } from '../../../nodes/manage.ts';
import { emptyTrash, listTrash, purgeFromTrash, restoreFromTrash } from '../../../nodes/trash.ts';
import { trashPage } from '../../../ui/dashboard.ts';
import { DASHBOARD, mainOnly, manager, nodeParams, publicNode, teamQuery } from './shared.ts';

const bodies = { empty: z.object({ ownerId: id.optional() }), none: z.unknown() };

interface TrashResult {
  msg: string;
  ownerId: number;
  node?: NodeRow;
}

/** Runs a trash operation: back to the trash page (browsers) or JSON. */
async function trashOp(
  req: FastifyRequest,
  reply: FastifyReply,
  op: (ctx: Ctx, me: ReturnType<typeof manager>) => Promise<TrashResult>,
) {
  let result: TrashResult;
  try {
    result = await op(req.ctx, manager(req));
  } catch (err) {
    const back = backWithRefusal(req, reply, err, `${DASHBOARD}/trash${teamOf(queryText(req, 'team'))}`);
    if (back) return back;
    throw err;
  }
  if (wantsHtml(req)) {
    const owner = await treeOwner(req.ctx, result.ownerId);
    const page = `${DASHBOARD}/trash${owner.own ? '' : teamOf(owner.username)}`;
    return reply.redirect(withMessage(req.ctx.secret, page, result.msg, 'success'), 302);
  }
  return reply.send({
    msg: result.msg,
    msgType: 'success',
    ...(result.node ? { node: publicNode(result.node) } : {}),
  });
}

/** The trash page of a team (a refusal goes back to the team's, when the request named one). */
const teamOf = (team: string | undefined) => (team ? `?team=${encodeURIComponent(team)}` : '');

const on = <B extends z.ZodType>(body: B) => ({ schema: { params: nodeParams, body }, attachValidation: true });

const trash: RoutePlugin = async (app) => {
  app.get(`${DASHBOARD}/trash`, { schema: { querystring: teamQuery } }, async (req, reply) => {
    mainOnly(req);
    const me = signedIn(req.ctx, 'dashboard');
    const owner = await treeOwner(req.ctx, req.query.team);
    const entries = await listTrash(req.ctx, { ownerId: owner.id });
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) {
      const trash = entries.map((e) => ({
        ...publicNode(e.node),
        inside: e.inside,
        trashedAt: e.node.trashed_at,
        purgeAt: e.purgeAt,
      }));
      return reply.send({ msg: '', msgType: 'success', trash });
    }
    const page = { username: me.username, owner: owner.username, ownerId: owner.id, team: !owner.own };
    return sendPage(reply, trashPage({ ...page, entries, msg: queryMsg(req) }));
  });

  app.post(`${DASHBOARD}/trash/:id/restore`, on(bodies.none), (req, reply) =>
    trashOp(req, reply, async (ctx) => {
      const node = await restoreFromTrash(ctx, { rootId: req.params.id });
      const where = node.path ? `"${node.path}"` : 'the top level';
      return { msg: `Restored "${node.name}" to ${where}, with its versions.`, ownerId: node.owner_id, node };
    }),
  );

  app.post(`${DASHBOARD}/trash/:id/purge`, on(bodies.none), (req, reply) =>
    trashOp(req, reply, async (ctx) => {
      const node = await purgeFromTrash(ctx, { rootId: req.params.id });
      return { msg: `"${node.name}" is deleted for good.`, ownerId: node.owner_id };
    }),
  );

  app.post(`${DASHBOARD}/trash/empty`, { schema: { body: bodies.empty }, attachValidation: true }, (req, reply) =>
    trashOp(req, reply, async (ctx, me) => {
      const ownerId = req.body.ownerId ?? me.accountId;
      const n = await emptyTrash(ctx, { ownerId });
      const msg =
        n === 0
          ? 'The trash was already empty.'
          : `Emptied the trash: ${n} deletion${n === 1 ? '' : 's'} gone for good.`;
      return { msg, ownerId };
    }),
  );
};

export default trash;
