// The trash (src/nodes/trash.ts): the list, restoring, purging and emptying.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../../services.ts';
import type { RoutePlugin } from '../plugin.ts';
import { backWithRefusal, id, idParam, parse, queryMsg, queryText, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import type { Actor } from '../../../access/actor.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import type { NodeRow } from '../../../store/schema.ts';
import { treeOwner } from '../../../nodes/manage.ts';
import { emptyTrash, listTrash, purgeFromTrash, restoreFromTrash } from '../../../nodes/trash.ts';
import { trashPage } from '../../../ui/dashboard.ts';
import { DASHBOARD, mainOnly, manager, publicNode } from './shared.ts';

const empty = z.object({ ownerId: id.optional() });

interface TrashResult {
  msg: string;
  ownerId: number;
  node?: NodeRow;
}

/** Runs a trash operation: back to the trash page (browsers) or JSON. */
async function trashOp(
  s: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  op: (actor: Actor) => Promise<TrashResult>,
) {
  let actor: Actor;
  let result: TrashResult;
  try {
    actor = manager(req);
    result = await op(actor);
  } catch (err) {
    const back = backWithRefusal(req, reply, err, `${DASHBOARD}/trash${teamQuery(req)}`);
    if (back) return back;
    throw err;
  }
  const owner = await treeOwner(s, actor, result.ownerId);
  const page = `${DASHBOARD}/trash${owner.id === actor.accountId ? '' : `?team=${encodeURIComponent(owner.username)}`}`;
  if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, page, result.msg, 'success'), 302);
  return reply.send({
    msg: result.msg,
    msgType: 'success',
    ...(result.node ? { node: publicNode(result.node) } : {}),
  });
}

/** The trash page a refusal goes back to: the team's, when the request named one. */
function teamQuery(req: FastifyRequest) {
  const t = queryText(req, 'team');
  return t ? `?team=${encodeURIComponent(t)}` : '';
}

const trash: RoutePlugin = async (app, { services: s }) => {
  app.get(`${DASHBOARD}/trash`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await treeOwner(s, actor, queryText(req, 'team'));
    const entries = await listTrash(s, actor.accountId, owner.id);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req))
      return reply.send({
        msg: '',
        msgType: 'success',
        trash: entries.map((e) => ({
          ...publicNode(e.node),
          inside: e.inside,
          trashedAt: e.node.trashed_at,
          purgeAt: e.purgeAt,
        })),
      });
    return sendPage(
      reply,
      trashPage({
        username: actor.username,
        owner: owner.username,
        ownerId: owner.id,
        team: owner.id !== actor.accountId,
        entries,
        msg: queryMsg(req),
      }),
    );
  });

  app.post(`${DASHBOARD}/trash/:id/restore`, (req, reply) =>
    trashOp(s, req, reply, async (actor) => {
      const node = await restoreFromTrash(s, actor.accountId, idParam(req), actor.writer);
      const where = node.path ? `"${node.path}"` : 'the top level';
      return { msg: `Restored "${node.name}" to ${where}, with its versions.`, ownerId: node.owner_id, node };
    }),
  );

  app.post(`${DASHBOARD}/trash/:id/purge`, (req, reply) =>
    trashOp(s, req, reply, async (actor) => {
      const node = await purgeFromTrash(s, actor.accountId, idParam(req));
      return { msg: `"${node.name}" is deleted for good.`, ownerId: node.owner_id };
    }),
  );

  app.post(`${DASHBOARD}/trash/empty`, (req, reply) =>
    trashOp(s, req, reply, async (actor) => {
      const b = parse(empty, req.body);
      const owner = await treeOwner(s, actor, b.ownerId);
      const n = await emptyTrash(s, actor.accountId, owner.id);
      return {
        msg:
          n === 0
            ? 'The trash was already empty.'
            : `Emptied the trash: ${n} deletion${n === 1 ? '' : 's'} gone for good.`,
        ownerId: owner.id,
      };
    }),
  );
};

export default trash;
