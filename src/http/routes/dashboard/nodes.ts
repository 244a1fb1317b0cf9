// One node: rename, move, delete (and its confirmation page), visibility, app, duplicate, download.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { flag, id, idParam, parse } from '../../io.ts';
import { notFound } from '../../../errors.ts';
import { limits } from '../../../limits.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { deleteNode, listTree, moveNode, renameNode, setVisibility } from '../../../nodes/tree.ts';
import { nodeToManage } from '../../../nodes/manage.ts';
import { TRASH_DAYS } from '../../../nodes/trash.ts';
import { duplicateDocument } from '../../../nodes/duplicate.ts';
import { documentContent } from '../../../nodes/serve.ts';
import { setEnableSignups } from '../../../apps/apps.ts';
import { appSignupUrl, confirmDeletePage } from '../../../ui/dashboard.ts';
import { contentTypeFor } from '../../../uploads/content-types.ts';
import { DASHBOARD, mainOnly, operate } from './shared.ts';

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
};

const nodes: RoutePlugin = async (app, { services: s }) => {
  app.post(`${DASHBOARD}/nodes/:id/rename`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(bodies.rename, req.body);
      const node = await nodeToManage(s, actor, idParam(req));
      const renamed = await renameNode(s, actor.accountId, node.id, b.name, { writer: actor.writer });
      return {
        msg: node.name === renamed.name ? 'Nothing to rename.' : `Renamed "${node.name}" to "${renamed.name}".`,
        node: renamed,
      };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/move`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(bodies.move, req.body);
      const node = await nodeToManage(s, actor, idParam(req));
      const moved = await moveNode(s, actor.accountId, node.id, b.parentId, b.name, { writer: actor.writer });
      const where = moved.path ? `"${moved.path}"` : 'the top level';
      return { msg: `Moved "${moved.name}" to ${where}.`, node: moved };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/delete`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(bodies.delete, req.body);
      const node = await nodeToManage(s, actor, idParam(req));
      const gone = await deleteNode(s, actor.accountId, node.id, { cascade: b.cascade, writer: actor.writer });
      const more = gone.length > 1 ? ` and ${gone.length - 1} item${gone.length === 2 ? '' : 's'} inside it` : '';
      return {
        msg: `Deleted "${node.name}"${more}: it stays in the trash for ${TRASH_DAYS} days.`,
        ownerId: node.owner_id,
      };
    }),
  );

  // Without script, deleting a non-empty folder asks first on a page of its own.
  app.get(`${DASHBOARD}/nodes/:id/delete`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const node = await nodeToManage(s, actor, idParam(req));
    const all = await listTree(s, actor.accountId, node.owner_id);
    const prefix = node.path ? `${node.path}/${node.name}` : node.name;
    const count =
      node.type === 'folder' ? all.filter((n) => n.path === prefix || n.path.startsWith(`${prefix}/`)).length : 0;
    return reply
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(confirmDeletePage({ username: actor.username, node, count }));
  });

  app.post(`${DASHBOARD}/nodes/:id/visibility`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(bodies.visibility, req.body);
      const node = await nodeToManage(s, actor, idParam(req));
      const changed = await setVisibility(s, actor.accountId, node.id, b.visibility);
      const msg =
        changed.visibility === 'private'
          ? `"${changed.name}" is now private: only you can open it.`
          : `"${changed.name}" is now public.`;
      return { msg, node: changed };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/app`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(bodies.app, req.body);
      const node = await nodeToManage(s, actor, idParam(req));
      const changed = await setEnableSignups(s, actor.accountId, node.id, b.enableSignups);
      const msg = changed.enable_signups
        ? `"${changed.name}" is an app: visitors sign up at ${appSignupUrl(documentHostUrl(s.config, actor.username), changed)} and get their own copy.`
        : `"${changed.name}" no longer takes signups; the copies already made stay with their owners.`;
      return { msg, node: changed };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/duplicate`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const node = await nodeToManage(s, actor, idParam(req));
      const copy = await duplicateDocument(s, actor.accountId, node, actor.writer);
      return { msg: `Duplicated "${node.name}" as "${copy.name}".`, node: copy, status: 201 };
    }),
  );

  app.get(`${DASHBOARD}/nodes/:id/download`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const node = await nodeToManage(s, actor, idParam(req));
    const bytes =
      node.type === 'site'
        ? (await documentContent(s, node))?.bytes
        : node.type === 'upload' && node.blob_sha256
          ? await s.blobs.get(node.blob_sha256)
          : null;
    if (!bytes) throw notFound();
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(node.name)}`)
      .header('x-content-type-options', 'nosniff')
      .type(node.type === 'site' ? 'text/html; charset=utf-8' : contentTypeFor(node.name))
      .send(bytes);
  });
};

export default nodes;
