// The account page: who you are, your plan, where you are signed in, and the agents you connected (agent keys).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { signIns } from '../../../accounts/account.ts';
import { agentsPanel, freshAgentKey, type AgentKeyInfo } from '../../../agents/keys.ts';
import { PLAN_NAMES } from '../../../billing/plans.ts';
import { accountPage } from '../../../ui/account.ts';
import { connectedAgents } from '../../../oauth/grants.ts';
import { queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { ACCOUNT, developer } from './shared.ts';
import { NEW_AGENT_KEY_COOKIE } from './agent-keys.ts';

/** `at=agents`: the answer of an agents form, shown in that section (the page opens there). */
const query = z.looseObject({ at: z.string().max(20).optional() });

/** The agent key made a moment ago (its cookie), shown once: this answer clears the cookie. */
function freshKey(req: FastifyRequest, reply: FastifyReply, keys: AgentKeyInfo[]) {
  const raw = req.cookies[NEW_AGENT_KEY_COOKIE];
  if (raw === undefined) return undefined;
  reply.clearCookie(NEW_AGENT_KEY_COOKIE, { path: ACCOUNT });
  const m = /^(\d{1,15})\.(hcak_[0-9a-f]{64})$/.exec(raw);
  return m ? freshAgentKey(keys, Number(m[1]), m[2], req.ctx.config.baseUrl) : undefined;
}

const page: RoutePlugin = async (app, { services: s }) => {
  app.get(ACCOUNT, { schema: { querystring: query } }, async (req, reply) => {
    const actor = developer(req, false);
    const logins = await signIns(s, actor.accountId, actor.loginId);
    const agents = await agentsPanel(req.ctx);
    const connected = await connectedAgents(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    const { username, email, plan, emailConfirmed } = actor;
    if (!wantsHtml(req))
      return {
        msg: '',
        msgType: 'success',
        account: { username, email, emailConfirmed, plan },
        logins,
        agents,
        connected,
      };
    const msg = queryMsg(req);
    const inAgents = req.query.at === 'agents';
    const fresh = freshKey(req, reply, agents.keys);
    return sendPage(
      reply,
      accountPage({
        ...{ username, email, emailConfirmed, plan: PLAN_NAMES[plan], logins },
        agents: { ...agents, fresh, msg: inAgents ? msg : undefined },
        connected,
        msg: inAgents ? undefined : msg,
      }),
    );
  });
};

export default page;
