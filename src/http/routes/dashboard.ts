// The developer dashboard on the main app. Bodies may be JSON or form-encoded.
//
//   GET  /_/dashboard                       the page: the signed-in account's tree
//   GET  /_/dashboard/nodes                 JSON {msg, msgType, nodes, html}
//   POST /_/dashboard/nodes                 create {type: 'site'|'folder', name, parentId?=0, html?}
//                                           (a name with slashes, e.g. `a/b/app.html`, creates the folders too)
//   GET  /_/dashboard/names?name=&parentId=&ownerId=  what that create would answer now, nothing written
//   POST /_/dashboard/nodes/:id/rename      {name}
//   POST /_/dashboard/nodes/:id/move        {parentId (0 = top level), name?}
//   POST /_/dashboard/nodes/:id/delete      {cascade?: true|'1'} — a non-empty folder without it: 400
//   POST /_/dashboard/nodes/:id/visibility  {visibility: 'public'|'private'}
//   POST /_/dashboard/nodes/:id/app         {enableSignups: true|false} — a document becomes a multi-tenant app
//   POST /_/dashboard/nodes/:id/duplicate   a document's copy beside it (`name-copy.html`)
//   GET  /_/dashboard/nodes/:id/download    the stored bytes as an attachment (documents and uploads)
//   GET  /_/dashboard/nodes/:id/delete      confirmation page for deleting a non-empty folder (no script)
//   GET  /_/dashboard?new=<name>            the page with the create form filled in (e.g. index.html)
//   GET  /_/dashboard?team=<name>           a team's tree (its owners and editors)
//   GET  /_/dashboard/trash[?team=]         the trash: deletions restorable for 30 days (JSON {trash})
//   POST /_/dashboard/trash/:id/restore     back where it was (409 when its name is taken there now)
//   POST /_/dashboard/trash/:id/purge       gone for good
//   POST /_/dashboard/trash/empty           {ownerId?}: every deletion gone for good
//
// AJAX answers: JSON {msg, msgType, html, node?} where `html` is the pre-rendered node list (errors:
// {msg, msgType:'error', code}). Browser form posts: 302 back to /_/dashboard with msg and msgType.
// Access: `dashboard` / `manage` on main_app, then `manage` on the node (src/access/table.ts).
import { pendingGuardNodes } from '../../store/guards.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { done, flag, id, idParam, parse, wantsHtml, queryMsg, queryText, sendPage } from '../io.ts';
import type { RoutePlugin } from './plugin.ts';
import { KilnError, notFound } from '../../errors.ts';
import { limits, isUnlimitedSites } from '../../limits.ts';
import { authorize, resourceOf, authorizeActor, authorizeTeamChange, allowsTeam } from '../../access/authorize.ts';
import { findTeam, roleIn, teamsOf } from '../../teams/teams.ts';
import type { Plan } from '../../store/schema.ts';
import { assertSameOrigin } from '../origin.ts';
import { withMessage } from '../messages.ts';
import { documentHostUrl, nodeUrlPath } from '../../core/urls.ts';
import { signupInstance } from '../../apps/instances.ts';
import type { Actor } from '../../access/actor.ts';
import {
  createNode,
  checkNewPath,
  createPath,
  deleteNode,
  getNode,
  listTree,
  moveNode,
  renameNode,
  setVisibility,
  type NodeRow,
} from '../../nodes/tree.ts';
import {
  appSignupUrl,
  confirmDeletePage,
  dashboardPage,
  nodeListHtml,
  trashPage,
  type ListView,
} from '../../ui/dashboard.ts';
import { uploadLimit } from '../../billing/plans.ts';
import { appSignups, setAppUserDisabled, setEnableSignups } from '../../apps/apps.ts';
import { signupsPage } from '../../ui/apps.ts';
import { STARTERS, type Starter } from '../../nodes/starters.ts';
import { duplicateDocument } from '../../nodes/duplicate.ts';
import { documentContent } from '../../nodes/serve.ts';
import { TRASH_DAYS, emptyTrash, listTrash, purgeFromTrash, restoreFromTrash } from '../../nodes/trash.ts';
import { activityFeed } from '../../nodes/activity.ts';
import { unread } from '../../messages/messages.ts';
import { collectionOf, markCollection, setLimits, unmarkCollection } from '../../collections/collections.ts';
import { collectionFoldersOf } from '../../store/collections.ts';
import { collectionPage } from '../../ui/collections.ts';
import { contentTypeFor } from '../../uploads/content-types.ts';

const DASHBOARD = '/_/dashboard';
const TYPE_WORD: Record<NodeRow['type'], string> = { site: 'Document', folder: 'Folder', upload: 'File' };

const bodies = {
  create: z.object({
    type: z.enum(['site', 'folder']).default('site'),
    name: z.string().max(limits.pathLength),
    parentId: id.default(0),
    /** A team's id to create in the team's tree (owners and editors); default: the caller's own. */
    ownerId: id.optional(),
    html: z.string().optional(),
    starter: z.enum(Object.keys(STARTERS) as [Starter, ...Starter[]]).default('blank'),
  }),
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
  collection: z.object({ collection: flag }),
  /** What anonymous submitters may store (src/collections/collections.ts `setLimits` checks the ranges). */
  collectionLimits: z.object({
    maxRecords: z.coerce.number(),
    maxMegabytes: z.coerce.number(),
    maxPerAddressHour: z.coerce.number(),
  }),
  empty: z.object({ ownerId: id.optional() }),
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  /** The dashboard lives on the main app; on a document host its GET is sent there. */
  function mainOnly(req: FastifyRequest) {
    if (req.site.kind !== 'main') throw notFound();
  }

  /** Signed in and allowed to manage a tree (developers; app users get 403, strangers 401). */
  function manager(req: FastifyRequest): Actor {
    mainOnly(req);
    assertSameOrigin(req);
    return authorizeActor({ actor: req.actor }, null, 'manage');
  }

  /** A node the caller may manage: the access table's `manage` on its own node, or on a team's node the
   *  team role's (owners and editors; a viewer gets the one refusal of viewers, as from the use cases). */
  async function managedNode(req: FastifyRequest): Promise<NodeRow> {
    const node = await getNode(s, idParam(req));
    if (!node) throw notFound();
    const actor = req.actor;
    const role =
      actor && node.owner_id !== actor.accountId ? await roleIn(s, node.owner_id, actor.accountId) : undefined;
    if (role) {
      authorizeTeamChange(role, 'manage', notFound);
      return node;
    }
    authorize({ actor }, resourceOf(node), 'manage');
    return node;
  }

  /** The tree shown: the caller's own, or a team's it may manage (`?team=<name>` or a team id). */
  async function ownerOf(actor: Actor, ref: string | number | undefined): Promise<Owner> {
    const own: Owner = {
      id: actor.accountId,
      username: actor.username,
      plan: actor.plan,
      unlimited: actor.isSuperadmin,
      own: true,
    };
    if (ref === undefined || ref === '' || ref === actor.accountId) return own;
    const team = await findTeam(s, ref);
    const role = team ? await roleIn(s, team.id, actor.accountId) : undefined;
    if (!team || !role) throw notFound('No such team.');
    authorizeTeamChange(role, 'manage', notFound, team.username);
    return { id: team.id, username: team.username, plan: team.plan, unlimited: false, own: false };
  }

  /** What the list shows besides the nodes: the owner's host, and its plan's limits. */
  async function listView(owner: Owner, nodes: NodeRow[]): Promise<ListView> {
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

  /** Runs one operation and shapes the answer: JSON with the fresh node list, or a 302 for browsers. */
  async function operate(
    req: FastifyRequest,
    reply: FastifyReply,
    op: (actor: Actor) => Promise<{ msg: string; node?: NodeRow; status?: number; ownerId?: number }>,
  ) {
    let result: { msg: string; node?: NodeRow; status?: number; ownerId?: number };
    let actor: Actor;
    try {
      actor = manager(req);
      result = await op(actor);
    } catch (err) {
      // Browser form posts come back to the dashboard with the refusal; sign-in goes to the login page.
      if (wantsHtml(req) && err instanceof KilnError && err.status !== 401 && req.site.kind === 'main') {
        return reply.redirect(withMessage(s.secret, DASHBOARD, err.message, 'error'), 302);
      }
      throw err;
    }
    const owner = await ownerOf(actor, result.node?.owner_id ?? result.ownerId);
    if (wantsHtml(req))
      return reply.redirect(withMessage(s.secret, dashboardOf(owner, actor), result.msg, 'success'), 302);
    const nodes = await listTree(s, actor.accountId, owner.id);
    return reply.code(result.status ?? 200).send({
      msg: result.msg,
      msgType: 'success',
      html: nodeListHtml(await listView(owner, nodes)),
      ...(result.node ? { node: publicNode(result.node) } : {}),
    });
  }

  app.get(DASHBOARD, async (req, reply) => {
    if (req.site.kind !== 'main') return reply.redirect(`${s.config.baseUrl}${DASHBOARD}`, 302);
    // A visitor who signed up to someone's app has no dashboard: its home is its own copy.
    if (req.actor?.accountType === 'app_user' && wantsHtml(req)) {
      const instance = await signupInstance(s, req.actor.accountId);
      if (instance) return reply.redirect(documentHostUrl(s.config, req.actor.username) + nodeUrlPath(instance), 302);
    }
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await ownerOf(actor, queryText(req, 'team'));
    const nodes = await listTree(s, actor.accountId, owner.id);
    const teams = (await teamsOf(s, actor.accountId)).filter((t) => allowsTeam(t.role, 'manage'));
    const trashed = (await listTrash(s, actor.accountId, owner.id)).length;
    const activity = await activityFeed(s, actor.accountId, owner.id, 10);
    const body = dashboardPage({
      ...(await listView(owner, nodes)),
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
    const owner = await ownerOf(actor, queryText(req, 'team'));
    const nodes = await listTree(s, actor.accountId, owner.id);
    return reply.header('cache-control', 'no-store').send({
      msg: '',
      msgType: 'success',
      nodes: nodes.map(publicNode),
      html: nodeListHtml(await listView(owner, nodes)),
    });
  });

  // The New-document form asks as a name is typed: what creating it would answer, nothing written.
  app.get(`${DASHBOARD}/names`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const b = parse(bodies.create, req.query);
    const owner = await ownerOf(actor, b.ownerId);
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
    operate(req, reply, async (actor) => {
      const b = parse(bodies.create, req.body);
      const owner = await ownerOf(actor, b.ownerId);
      const input = { ownerId: owner.id, html: b.html, starter: b.starter, writer: actor.writer };
      const name = b.name.trim();
      const node = name.includes('/')
        ? await createPath(s, actor.accountId, { ...input, path: name, type: b.type, parentId: b.parentId })
        : await createNode(s, actor.accountId, { ...input, parentId: b.parentId, type: b.type, name: b.name });
      return { msg: `${TYPE_WORD[node.type]} "${node.name}" created.`, node, status: 201 };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/rename`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const b = parse(bodies.rename, req.body);
      const node = await managedNode(req);
      const renamed = await renameNode(s, actor.accountId, node.id, b.name, { writer: actor.writer });
      return {
        msg: node.name === renamed.name ? 'Nothing to rename.' : `Renamed "${node.name}" to "${renamed.name}".`,
        node: renamed,
      };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/move`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const b = parse(bodies.move, req.body);
      const node = await managedNode(req);
      const moved = await moveNode(s, actor.accountId, node.id, b.parentId, b.name, { writer: actor.writer });
      const where = moved.path ? `"${moved.path}"` : 'the top level';
      return { msg: `Moved "${moved.name}" to ${where}.`, node: moved };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/delete`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const b = parse(bodies.delete, req.body);
      const node = await managedNode(req);
      const gone = await deleteNode(s, actor.accountId, node.id, { cascade: b.cascade, writer: actor.writer });
      const more = gone.length > 1 ? ` and ${gone.length - 1} item${gone.length === 2 ? '' : 's'} inside it` : '';
      return {
        msg: `Deleted "${node.name}"${more}: it stays in the trash for ${TRASH_DAYS} days.`,
        ownerId: node.owner_id,
      };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/visibility`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const b = parse(bodies.visibility, req.body);
      const node = await managedNode(req);
      const changed = await setVisibility(s, actor.accountId, node.id, b.visibility);
      const msg =
        changed.visibility === 'private'
          ? `"${changed.name}" is now private: only you can open it.`
          : `"${changed.name}" is now public.`;
      return { msg, node: changed };
    }),
  );

  app.post(`${DASHBOARD}/nodes/:id/app`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const b = parse(bodies.app, req.body);
      const node = await managedNode(req);
      const changed = await setEnableSignups(s, actor.accountId, node.id, b.enableSignups);
      const msg = changed.enable_signups
        ? `"${changed.name}" is an app: visitors sign up at ${appSignupUrl(documentHostUrl(s.config, actor.username), changed)} and get their own copy.`
        : `"${changed.name}" no longer takes signups; the copies already made stay with their owners.`;
      return { msg, node: changed };
    }),
  );

  // ---------------------------------------------------------------- collections (src/collections)

  app.post(`${DASHBOARD}/nodes/:id/collection`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const on = parse(bodies.collection, req.body).collection;
      const node = await managedNode(req);
      if (!on) {
        await unmarkCollection(s, actor.accountId, node.id);
        return { msg: `"${node.name}" no longer takes submissions; its form, dashboard and records stay.`, node };
      }
      await markCollection(s, actor.accountId, node.id);
      return {
        msg: `"${node.name}" is a collection: share ${node.name}/submission-form.html, and read what arrives in ${node.name}/dashboard.html.`,
        node,
        status: 201,
      };
    }),
  );

  app.get(`${DASHBOARD}/nodes/:id/collection`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const node = await managedNode(req);
    const info = await collectionOf(s, actor.accountId, node.id);
    if (!info) throw notFound('That folder is not a collection.');
    const owner = await ownerOf(actor, node.owner_id);
    const folderUrl = documentHostUrl(s.config, owner.username) + nodeUrlPath(node);
    const view = {
      ...info,
      formUrl: `${folderUrl}/submission-form.html`,
      dashboardUrl: `${folderUrl}/dashboard.html`,
      recordsUrl: `${documentHostUrl(s.config, owner.username)}/_/collection/${info.id}/records`,
    };
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', collection: view };
    return sendPage(reply, collectionPage({ username: actor.username, name: node.name, ...view, msg: queryMsg(req) }));
  });

  app.post(`${DASHBOARD}/nodes/:id/collection/limits`, async (req, reply) => {
    const actor = manager(req);
    const node = await managedNode(req);
    const infoPage = `${DASHBOARD}/nodes/${node.id}/collection`;
    let set: Awaited<ReturnType<typeof setLimits>>;
    try {
      const b = parse(bodies.collectionLimits, req.body);
      set = await setLimits(s, actor.accountId, node.id, {
        maxRecords: b.maxRecords,
        maxBytes: Math.round(b.maxMegabytes * 1024 * 1024),
        maxPerAddressHour: b.maxPerAddressHour,
      });
    } catch (err) {
      // The form comes back with the refusal in its banner.
      if (wantsHtml(req) && err instanceof KilnError && err.status === 400)
        return reply.redirect(withMessage(s.secret, infoPage, err.message, 'error'), 302);
      throw err;
    }
    return done(req, reply, `Saved: "${node.name}" takes at most ${set.maxRecords} records.`, {
      redirect: infoPage,
      extra: { limits: set },
    });
  });

  app.post(`${DASHBOARD}/nodes/:id/duplicate`, (req, reply) =>
    operate(req, reply, async (actor) => {
      const node = await managedNode(req);
      const copy = await duplicateDocument(s, actor.accountId, node, actor.writer);
      return { msg: `Duplicated "${node.name}" as "${copy.name}".`, node: copy, status: 201 };
    }),
  );

  app.get(`${DASHBOARD}/nodes/:id/download`, async (req, reply) => {
    mainOnly(req);
    authorizeActor({ actor: req.actor }, null, 'manage');
    const node = await managedNode(req);
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

  // ---------------------------------------------------------------- an app's sign-ups

  app.get(`${DASHBOARD}/nodes/:id/signups`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const { app: node, users } = await appSignups(s, actor.accountId, idParam(req));
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', app: node.name, users };
    return sendPage(
      reply,
      signupsPage({
        username: actor.username,
        app: node,
        users,
        signupUrl: appSignupUrl(documentHostUrl(s.config, actor.username), node),
        msg: queryMsg(req),
      }),
    );
  });

  app.post(`${DASHBOARD}/nodes/:id/signups/:user/disable`, async (req, reply) => {
    const actor = manager(req);
    const disabled = parse(z.object({ disabled: flag }), req.body).disabled;
    const appId = idParam(req);
    const user = await setAppUserDisabled(s, actor.accountId, appId, idParam(req, 'user'), disabled);
    const msg = disabled
      ? `${user.username} is disabled: they cannot sign in, and their copy answers "unavailable".`
      : `${user.username} may sign in again.`;
    if (wantsHtml(req))
      return reply.redirect(withMessage(s.secret, `${DASHBOARD}/nodes/${appId}/signups`, msg, 'success'), 302);
    return { msg, msgType: 'success' };
  });

  // ---------------------------------------------------------------- activity

  app.get('/_/activity', async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await ownerOf(actor, queryText(req, 'team'));
    const limit = Number(queryText(req, 'limit') ?? 100) || 100;
    reply.header('cache-control', 'no-store');
    return { msg: '', msgType: 'success', activity: await activityFeed(s, actor.accountId, owner.id, limit) };
  });

  // ---------------------------------------------------------------- trash

  app.get(`${DASHBOARD}/trash`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await ownerOf(actor, queryText(req, 'team'));
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

  /** Runs a trash operation: back to the trash page (browsers) or JSON. */
  async function trashOp(
    req: FastifyRequest,
    reply: FastifyReply,
    op: (actor: Actor) => Promise<{ msg: string; ownerId: number; node?: NodeRow }>,
  ) {
    let actor: Actor;
    let result: { msg: string; ownerId: number; node?: NodeRow };
    try {
      actor = manager(req);
      result = await op(actor);
    } catch (err) {
      if (wantsHtml(req) && err instanceof KilnError && err.status !== 401 && req.site.kind === 'main')
        return reply.redirect(withMessage(s.secret, `${DASHBOARD}/trash${teamQuery(req)}`, err.message, 'error'), 302);
      throw err;
    }
    const owner = await ownerOf(actor, result.ownerId);
    const page = `${DASHBOARD}/trash${owner.id === actor.accountId ? '' : `?team=${encodeURIComponent(owner.username)}`}`;
    if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, page, result.msg, 'success'), 302);
    return reply.send({
      msg: result.msg,
      msgType: 'success',
      ...(result.node ? { node: publicNode(result.node) } : {}),
    });
  }
  const teamQuery = (req: FastifyRequest) => {
    const t = queryText(req, 'team');
    return t ? `?team=${encodeURIComponent(t)}` : '';
  };

  app.post(`${DASHBOARD}/trash/:id/restore`, (req, reply) =>
    trashOp(req, reply, async (actor) => {
      const node = await restoreFromTrash(s, actor.accountId, idParam(req), actor.writer);
      const where = node.path ? `"${node.path}"` : 'the top level';
      return { msg: `Restored "${node.name}" to ${where}, with its versions.`, ownerId: node.owner_id, node };
    }),
  );

  app.post(`${DASHBOARD}/trash/:id/purge`, (req, reply) =>
    trashOp(req, reply, async (actor) => {
      const node = await purgeFromTrash(s, actor.accountId, idParam(req));
      return { msg: `"${node.name}" is deleted for good.`, ownerId: node.owner_id };
    }),
  );

  app.post(`${DASHBOARD}/trash/empty`, (req, reply) =>
    trashOp(req, reply, async (actor) => {
      const b = parse(bodies.empty, req.body);
      const owner = await ownerOf(actor, b.ownerId);
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

  app.get(`${DASHBOARD}/nodes/:id/delete`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const node = await managedNode(req);
    const all = await listTree(s, actor.accountId, node.owner_id);
    const prefix = node.path ? `${node.path}/${node.name}` : node.name;
    const count =
      node.type === 'folder' ? all.filter((n) => n.path === prefix || n.path.startsWith(`${prefix}/`)).length : 0;
    return reply
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(confirmDeletePage({ username: actor.username, node, count }));
  });
};

/** Whose tree the dashboard shows. */
interface Owner {
  id: number;
  username: string;
  plan: Plan;
  /** Superadmins have no document limit on their own tree. */
  unlimited: boolean;
  /** The caller's own tree (not a team's). */
  own: boolean;
}

/** The dashboard page of a tree: the caller's own, or `?team=<name>`. */
function dashboardOf(owner: Owner, actor: Actor): string {
  return owner.id === actor.accountId ? DASHBOARD : `${DASHBOARD}?team=${encodeURIComponent(owner.username)}`;
}

/** The node fields an API client sees (camelCase, booleans). */
function publicNode(n: NodeRow) {
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

export default plugin;
