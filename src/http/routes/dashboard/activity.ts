// The activity feed of a tree (src/nodes/activity.ts); the dashboard page shows its first entries.
import type { RoutePlugin } from '../plugin.ts';
import { queryText } from '../../io.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { treeOwner } from '../../../nodes/manage.ts';
import { activityFeed } from '../../../nodes/activity.ts';
import { mainOnly } from './shared.ts';

const activity: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/activity', async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'dashboard');
    const owner = await treeOwner(s, actor, queryText(req, 'team'));
    const limit = Number(queryText(req, 'limit') ?? 100) || 100;
    reply.header('cache-control', 'no-store');
    return { msg: '', msgType: 'success', activity: await activityFeed(s, actor.accountId, owner.id, limit) };
  });
};

export default activity;
