// A folder as a collection (src/collections): on and off, its info page, and what submitters may store.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { done, flag, idParam, parse, queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { KilnError, notFound } from '../../../errors.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { nodeToManage, treeOwner } from '../../../nodes/manage.ts';
import { collectionOf, markCollection, setLimits, unmarkCollection } from '../../../collections/collections.ts';
import { collectionPage } from '../../../ui/collections.ts';
import { DASHBOARD, mainOnly, manager, operate } from './shared.ts';

const bodies = {
  collection: z.object({ collection: flag }),
  /** What anonymous submitters may store (src/collections/collections.ts `setLimits` checks the ranges). */
  limits: z.object({
    maxRecords: z.coerce.number(),
    maxMegabytes: z.coerce.number(),
    maxPerAddressHour: z.coerce.number(),
  }),
};

const collections: RoutePlugin = async (app, { services: s }) => {
  app.post(`${DASHBOARD}/nodes/:id/collection`, (req, reply) =>
    operate(s, req, reply, async (actor) => {
      const on = parse(bodies.collection, req.body).collection;
      const node = await nodeToManage(s, actor, idParam(req));
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
    const node = await nodeToManage(s, actor, idParam(req));
    const info = await collectionOf(s, actor.accountId, node.id);
    if (!info) throw notFound('That folder is not a collection.');
    const owner = await treeOwner(s, actor, node.owner_id);
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
    const node = await nodeToManage(s, actor, idParam(req));
    const infoPage = `${DASHBOARD}/nodes/${node.id}/collection`;
    let set: Awaited<ReturnType<typeof setLimits>>;
    try {
      const b = parse(bodies.limits, req.body);
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
};

export default collections;
