// A folder as a collection (src/collections): on and off, its info page, and what submitters may store.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { done, flag, queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { KilnError } from '../../../errors.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { collectionInfo, collectionLimits, setCollection } from '../../../nodes/node-actions.ts';
import { collectionPage } from '../../../ui/collections.ts';
import { DASHBOARD, mainOnly, manager, nodeParams, operate } from './shared.ts';

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
  app.post(
    `${DASHBOARD}/nodes/:id/collection`,
    { schema: { params: nodeParams, body: bodies.collection }, attachValidation: true },
    (req, reply) =>
      operate(req, reply, async (ctx) => {
        const on = req.body.collection;
        const node = await setCollection(ctx, { nodeId: req.params.id, on });
        if (!on)
          return { msg: `"${node.name}" no longer takes submissions; its form, dashboard and records stay.`, node };
        return {
          msg: `"${node.name}" is a collection: share ${node.name}/submission-form.html, and read what arrives in ${node.name}/dashboard.html.`,
          node,
          status: 201,
        };
      }),
  );

  app.get(`${DASHBOARD}/nodes/:id/collection`, { schema: { params: nodeParams } }, async (req, reply) => {
    mainOnly(req);
    const me = signedIn(req.ctx, 'manage');
    const { node, info } = await collectionInfo(req.ctx, { nodeId: req.params.id });
    const host = documentHostUrl(s.config, info.ownerUsername);
    const view = {
      ...info,
      formUrl: `${host}${nodeUrlPath(node)}/submission-form.html`,
      dashboardUrl: `${host}${nodeUrlPath(node)}/dashboard.html`,
      recordsUrl: `${host}/_/collection/${info.id}/records`,
    };
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', collection: view };
    return sendPage(reply, collectionPage({ username: me.username, name: node.name, ...view, msg: queryMsg(req) }));
  });

  app.post(
    `${DASHBOARD}/nodes/:id/collection/limits`,
    { schema: { params: nodeParams, body: bodies.limits }, attachValidation: true },
    async (req, reply) => {
      const infoPage = `${DASHBOARD}/nodes/${req.params.id}/collection`;
      let saved: Awaited<ReturnType<typeof collectionLimits>>;
      try {
        manager(req);
        saved = await collectionLimits(req.ctx, { nodeId: req.params.id, ...req.body });
      } catch (err) {
        // The form comes back with the refusal in its banner.
        if (wantsHtml(req) && err instanceof KilnError && err.status === 400)
          return reply.redirect(withMessage(s.secret, infoPage, err.message, 'error'), 302);
        throw err;
      }
      return done(req, reply, `Saved: "${saved.node.name}" takes at most ${saved.set.maxRecords} records.`, {
        redirect: infoPage,
        extra: { limits: saved.set },
      });
    },
  );
};

export default collections;
