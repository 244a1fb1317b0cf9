// The tree: the dashboard page, its node list, and creating documents and folders.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { id, queryMsg, wantsHtml } from '../../io.ts';
import { limits } from '../../../limits.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { signupInstance } from '../../../apps/instances.ts';
import { checkNewPath, createNode, createPath, type NodeRow } from '../../../nodes/tree.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { dashboardView, treeView } from '../../../nodes/tree-view.ts';
import { STARTERS, type Starter } from '../../../nodes/starters.ts';
import { dashboardPage, nodeListHtml } from '../../../ui/dashboard.ts';
import { DASHBOARD, mainOnly, operate, publicNode, teamQuery } from './shared.ts';

const TYPE_WORD: Record<NodeRow['type'], string> = { site: 'Document', folder: 'Folder', upload: 'File' };

const create = z.object({
  type: z.enum(['site', 'folder']).default('site'),
  name: z.string().max(limits.pathLength),
  parentId: id.default(0),
  /** A team's id to create in the team's tree (owners and editors); default: the caller's own. */
  ownerId: id.optional(),
  html: z.string().optional(),
  starter: z.enum(Object.keys(STARTERS) as [Starter, ...Starter[]]).default('blank'),
});

/** The page's query: whose tree, and a name to fill into the create form (`?new=index.html`). */
const pageQuery = teamQuery.extend({ new: z.string().optional().catch(undefined) });

const tree: RoutePlugin = async (app, { services: s }) => {
  app.get(DASHBOARD, { schema: { querystring: pageQuery } }, async (req, reply) => {
    if (req.site.kind !== 'main') return reply.redirect(`${s.config.baseUrl}${DASHBOARD}`, 302);
    // A visitor who signed up to someone's app has no dashboard: its home is its own copy.
    const me = req.ctx.caller.actor;
    if (me?.accountType === 'app_user' && wantsHtml(req)) {
      const instance = await signupInstance(s, me.accountId);
      if (instance) return reply.redirect(documentHostUrl(s.config, me.username) + nodeUrlPath(instance), 302);
    }
    const view = await dashboardView(req.ctx, req.query.team);
    const body = dashboardPage({
      ...view,
      owner: view.owner.username,
      msg: queryMsg(req),
      newName: req.query.new?.slice(0, limits.pathLength),
    });
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
  });

  app.get(`${DASHBOARD}/nodes`, { schema: { querystring: teamQuery } }, async (req, reply) => {
    mainOnly(req);
    signedIn(req.ctx, 'dashboard');
    const view = await treeView(req.ctx, req.query.team);
    return reply.header('cache-control', 'no-store').send({
      msg: '',
      msgType: 'success',
      nodes: view.nodes.map(publicNode),
      html: nodeListHtml(view),
    });
  });

  // The New-document form asks as a name is typed: what creating it would answer, nothing written.
  app.get(`${DASHBOARD}/names`, { schema: { querystring: create } }, async (req, reply) => {
    mainOnly(req);
    const me = signedIn(req.ctx, 'manage');
    const b = req.query;
    const name = b.name.includes('/') ? b.name.trim() : b.name;
    const ownerId = b.ownerId ?? me.accountId;
    const path = await checkNewPath(req.ctx, { ownerId, path: name, type: b.type, parentId: b.parentId });
    return reply.header('cache-control', 'no-store').send({ msg: `"${path}" is free.`, msgType: 'success', path });
  });

  app.post(`${DASHBOARD}/nodes`, { schema: { body: create }, attachValidation: true }, (req, reply) =>
    operate(req, reply, async (ctx, me) => {
      const b = req.body;
      const input = { ownerId: b.ownerId ?? me.accountId, html: b.html, starter: b.starter };
      const name = b.name.trim();
      const node = name.includes('/')
        ? await createPath(ctx, { ...input, path: name, type: b.type, parentId: b.parentId })
        : await createNode(ctx, { ...input, parentId: b.parentId, type: b.type, name: b.name });
      return { msg: `${TYPE_WORD[node.type]} "${node.name}" created.`, node, status: 201 };
    }),
  );
};

export default tree;
