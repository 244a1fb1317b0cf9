// The tree: the dashboard page, its node list, and creating documents and folders.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { id, parse, queryMsg, queryText, wantsHtml } from '../../io.ts';
import { limits } from '../../../limits.ts';
import { allowsTeam, authorizeActor } from '../../../access/authorize.ts';
import { teamsOf } from '../../../teams/teams.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { signupInstance } from '../../../apps/instances.ts';
import { checkNewPath, createNode, createPath, listTree } from '../../../nodes/tree.ts';
import type { NodeRow } from '../../../store/schema.ts';
import { treeOwner } from '../../../nodes/manage.ts';
import { STARTERS, type Starter } from '../../../nodes/starters.ts';
import { listTrash } from '../../../nodes/trash.ts';
import { activityFeed } from '../../../nodes/activity.ts';
import { unread } from '../../../messages/messages.ts';
import { dashboardPage, nodeListHtml } from '../../../ui/dashboard.ts';
import { DASHBOARD, listView, mainOnly, operate, publicNode } from './shared.ts';

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

const tree: RoutePlugin = async (app, { services: s }) => {
  app.get(DASHBOARD, async (req, reply) => {
    if (req.site.kind !== 'main') return reply.redirect(`${s.config.baseUrl}${DASHBOARD}`, 302);
    // A visitor who signed up to someone's app has no dashboard: its home is its own copy.
    if (req.actor?.accountType === 'app_user' && wantsHtml(req)) {
      const instance = await signupInstance(s, req.actor.accountId);
      if (instance) return reply.redirect(documentHostUrl(s.config, req.actor.username) + nodeUrlPath(instance), 302);
    }
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await treeOwner(s, actor, queryText(req, 'team'));
    const nodes = await listTree(s, actor.accountId, owner.id);
    const teams = (await teamsOf(s, actor.accountId)).filter((t) => allowsTeam(t.role, 'manage'));
    const trashed = (await listTrash(s, actor.accountId, owner.id)).length;
    const activity = await activityFeed(s, actor.accountId, owner.id, 10);
    const body = dashboardPage({
      ...(await listView(s, owner, nodes)),
      username: actor.username,
      owner: owner.username,
      accounts: [actor.username, ...teams.map((t) => t.username)],
      trashed,
      activity,
      unreadMessages: owner.id === actor.accountId ? await unread(s, actor.accountId) : 0,
      isAdmin: actor.isSuperadmin,
      msg: queryMsg(req),
      newName: queryText(req, 'new')?.slice(0, limits.pathLength),
    });
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
  });

  app.get(`${DASHBOARD}/nodes`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await treeOwner(s, actor, queryText(req, 'team'));
    const nodes = await listTree(s, actor.accountId, owner.id);
    return reply.header('cache-control', 'no-store').send({
      msg: '',
      msgType: 'success',
      nodes: nodes.map(publicNode),
      html: nodeListHtml(await listView(s, owner, nodes)),
    });
  });

  // The New-document form asks as a name is typed: what creating it would answer, nothing written.
  app.get(`${DASHBOARD}/names`, { schema: { querystring: create } }, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const b = req.query;
    const owner = await treeOwner(s, actor, b.ownerId);
    const name = b.name.includes('/') ? b.name.trim() : b.name;
    const path = await checkNewPath(s, actor.accountId, {
      ownerId: owner.id,
      path: name,
      type: b.type,
      parentId: b.parentId,
    });
    return reply.header('cache-control', 'no-store').send({ msg: `"${path}" is free.`, msgType: 'success', path });
  });

  app.post(`${DASHBOARD}/nodes`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const b = parse(create, req.body);
      const owner = await treeOwner(s, actor, b.ownerId);
      const input = { ownerId: owner.id, html: b.html, starter: b.starter, writer: actor.writer };
      const name = b.name.trim();
      const node = name.includes('/')
        ? await createPath(s, actor.accountId, { ...input, path: name, type: b.type, parentId: b.parentId })
        : await createNode(s, actor.accountId, { ...input, parentId: b.parentId, type: b.type, name: b.name });
      return { msg: `${TYPE_WORD[node.type]} "${node.name}" created.`, node, status: 201 };
    }),
  );
};

export default tree;
