// The activity feed of a tree (src/nodes/activity.ts); the dashboard page shows its first entries.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { signedIn, treeOwner } from '../../../nodes/manage.ts';
import { activityFeed } from '../../../nodes/activity.ts';
import { mainOnly, teamQuery } from './shared.ts';

/** `?limit=` (1 to 500; anything else: 100). */
const query = teamQuery.extend({ limit: z.coerce.number().int().positive().catch(100).default(100) });

const activity: RoutePlugin = async (app) => {
  app.get('/_/activity', { schema: { querystring: query } }, async (req, reply) => {
    mainOnly(req);
    signedIn(req.ctx, 'dashboard');
    const owner = await treeOwner(req.ctx, req.query.team);
    reply.header('cache-control', 'no-store');
    const feed = await activityFeed(req.ctx, { ownerId: owner.id, limit: req.query.limit });
    return { msg: '', msgType: 'success', activity: feed };
  });
};

export default activity;
