// The account page: who you are, your plan, and where you are signed in.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { signIns } from '../../../accounts/account.ts';
import { PLAN_NAMES } from '../../../billing/plans.ts';
import { accountPage } from '../../../ui/account.ts';
import { connectedAgents } from '../../../oauth/grants.ts';
import { queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { ACCOUNT, developer } from './shared.ts';

const page: RoutePlugin = async (app, { services: s }) => {
  app.get(ACCOUNT, { schema: { querystring: z.looseObject({}) } }, async (req, reply) => {
    const actor = developer(req, false);
    const logins = await signIns(s, actor.accountId, actor.loginId);
    const agents = await connectedAgents(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    const { username, email, plan, emailConfirmed } = actor;
    if (!wantsHtml(req))
      return { msg: '', msgType: 'success', account: { username, email, emailConfirmed, plan }, logins, agents };
    return sendPage(
      reply,
      accountPage({ username, email, emailConfirmed, plan: PLAN_NAMES[plan], logins, agents, msg: queryMsg(req) }),
    );
  });
};

export default page;
