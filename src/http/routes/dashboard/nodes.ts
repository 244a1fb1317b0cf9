// One node: rename, move, delete (and its confirmation page), visibility, app, duplicate, download.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { flag, id } from '../../io.ts';
import { limits } from '../../../limits.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { deleteNode, moveNode, renameNode, setVisibility } from '../../../nodes/tree.ts';
import { TRASH_DAYS } from '../../../nodes/trash.ts';
import { deletionOf, download, duplicate, makeApp } from '../../../nodes/node-actions.ts';
import { appSignupUrl, confirmDeletePage } from '../../../ui/dashboard.ts';
import { contentTypeFor } from '../../../uploads/content-types.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { DASHBOARD, mainOnly, nodeParams, operate } from './shared.ts';

const bodies = {
  rename: z.object({ name: z.string().max(limits.nameLength * 2) }),
  move: z.object({
    parentId: id,
    name: z
      .string()
      .max(limits.nameLength * 2)
      .optional(),
  }),
  delete: z.object({ cascade: flag.default(false) }),
  visibility: z.object({ visibility: z.enum(['public', 'private']) }),
  app: z.object({ enableSignups: flag }),
  none: z.unknown(),
};

/** A node's route with this body: a refused field answers after who is asking (src/http/routes/dashboard/shared.ts). */
const on = <B extends z.ZodType>(body: B) => ({ schema: { params: nodeParams, body }, attachValidation: true });

const nodes: RoutePlugin = async (app, { services: s }) => {
  app.post(`${DASHBOARD}/nodes/:id/rename`, on(bodies.rename), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const renamed = await renameNode(ctx, { nodeId: req.params.id, name: req.body.name });
      const { oldName: was, ...node } = renamed;
      return { msg: was === node.name ? 'Nothing to rename.' : `Renamed "${was}" to "${node.name}".`, node };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/move`, on(bodies.move), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const moved = await moveNode(ctx, { nodeId: req.params.id, parentId: req.body.parentId, name: req.body.name });
      const where = moved.path ? `"${moved.path}"` : 'the top level';
      return { msg: `Moved "${moved.name}" to ${where}.`, node: moved };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/delete`, on(bodies.delete), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const gone = await deleteNode(ctx, { nodeId: req.params.id, cascade: req.body.cascade });
      const more = gone.length > 1 ? ` and ${gone.length - 1} item${gone.length === 2 ? '' : 's'} inside it` : '';
      return {
        msg: `Deleted "${gone[0].name}"${more}: it stays in the trash for ${TRASH_DAYS} days.`,
        ownerId: gone[0].owner_id,
      };
    }),
  );

  // Without script, deleting a non-empty folder asks first on a page of its own.
  app.get(`${DASHBOARD}/nodes/:id/delete`, { schema: { params: nodeParams } }, async (req, reply) => {
    mainOnly(req);
    const me = signedIn(req.ctx, 'manage');
    const { node, count } = await deletionOf(req.ctx, { nodeId: req.params.id });
    return reply
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(confirmDeletePage({ username: me.username, node, count }));
  });

  app.post(`${DASHBOARD}/nodes/:id/visibility`, on(bodies.visibility), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const changed = await setVisibility(ctx, { nodeId: req.params.id, visibility: req.body.visibility });
      const msg =
        changed.visibility === 'private'
          ? `"${changed.name}" is now private: only you can open it.`
          : `"${changed.name}" is now public.`;
      return { msg, node: changed };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/app`, on(bodies.app), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const { node: changed, hostUsername } = await makeApp(ctx, {
        nodeId: req.params.id,
        enableSignups: req.body.enableSignups,
      });
      const msg = changed.enable_signups
        ? `"${changed.name}" is an app: visitors sign up at ${appSignupUrl(documentHostUrl(s.config, hostUsername), changed)} and get their own copy.`
        : `"${changed.name}" no longer takes signups; the copies already made stay with their owners.`;
      return { msg, node: changed };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/duplicate`, on(bodies.none), (req, reply) =>
    operate(req, reply, async (ctx) => {
      const { node, copy } = await duplicate(ctx, { nodeId: req.params.id });
      return { msg: `Duplicated "${node.name}" as "${copy.name}".`, node: copy, status: 201 };
    }),
  );

  app.get(`${DASHBOARD}/nodes/:id/download`, { schema: { params: nodeParams } }, async (req, reply) => {
    mainOnly(req);
    signedIn(req.ctx, 'manage');
    const { node, bytes } = await download(req.ctx, { nodeId: req.params.id });
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(node.name)}`)
      .header('x-content-type-options', 'nosniff')
      .type(node.type === 'site' ? 'text/html; charset=utf-8' : contentTypeFor(node.name))
      .send(bytes);
  });
};

export default nodes;
