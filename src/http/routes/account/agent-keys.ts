// "Connect an agent" on the account page: making an agent key (shown once, with the lines to paste into each
// client) and revoking one. The page itself lists them (page.ts). Browsers come back to the page's agents
// section (`?at=agents#agents`) with the answer there; programs get JSON.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { KilnError } from '../../../errors.ts';
import { createAgentKey, revokeAgentKey } from '../../../agents/keys.ts';
import { connectLines } from '../../../agents/connect.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { bodies } from './schemas.ts';
import { ACCOUNT, developerForm, formBody, idParams } from './shared.ts';

export const AGENT_KEYS = `${ACCOUNT}/agent-keys`;
/** The key made a moment ago, on its way to the page that shows it once (never in a URL). */
export const NEW_AGENT_KEY_COOKIE = 'kiln_new_agent_key';

/** Back to the agents section of the page with the answer in words. */
function toSection(req: FastifyRequest, reply: FastifyReply, msg: string, type: 'success' | 'error') {
  const url = withMessage(req.messageSecret, ACCOUNT, msg, type);
  return reply.redirect(`${url}&at=agents#agents`, type === 'error' ? 302 : 303);
}

/** A refusal: browsers go back to the section with it (401 and 429 keep their own pages); programs get JSON. */
async function orBack(req: FastifyRequest, reply: FastifyReply, fn: () => Promise<unknown>) {
  try {
    if (req.validationError) throw req.validationError;
    return await fn();
  } catch (err) {
    const back = err instanceof KilnError && wantsHtml(req) && err.status !== 401 && err.status !== 429;
    if (back) return toSection(req, reply, err.message, 'error');
    throw err;
  }
}

const agentKeys: RoutePlugin = async (app, { services: s }) => {
  // Who is asking answers first (401, 403 cross-origin), before the body's schema and before an attempt counts.
  app.post(AGENT_KEYS, developerForm(bodies.agentKey), (req, reply) =>
    orBack(req, reply, async () => {
      const b = formBody(bodies.agentKey, req);
      const input = {
        name: b.name,
        readOnly: b.access === 'read',
        accountId: b.account,
        folder: b.folder,
        days: b.days,
      };
      await strictAttempt(s, req, reply, 'agent-key');
      const made = await createAgentKey(req.ctx, input);
      reply.header('cache-control', 'no-store');
      const msg = `Agent key “${made.info.name}” made. Copy it now: it is shown only once.`;
      if (!wantsHtml(req)) {
        const connect = connectLines(s.config.baseUrl, made.key);
        return reply.code(201).send({ msg, msgType: 'success', key: made.key, ...made.info, connect });
      }
      // POST-redirect-GET: a reload never makes a second key; the key waits in a short-lived cookie of the page.
      reply.setCookie(NEW_AGENT_KEY_COOKIE, `${made.info.id}.${made.key}`, {
        path: ACCOUNT,
        httpOnly: true,
        sameSite: 'strict',
        secure: s.config.secure,
        maxAge: 120,
      });
      return reply.redirect(`${ACCOUNT}?at=agents#agents`, 303);
    }),
  );

  const revoke = { ...developerForm(z.unknown()), schema: { params: idParams, body: z.unknown() } };
  app.post(`${AGENT_KEYS}/:id/revoke`, revoke, (req, reply) =>
    orBack(req, reply, async () => {
      const { key, revoked } = await revokeAgentKey(req.ctx, { id: req.params.id });
      const msg = revoked
        ? `Revoked the agent key “${key.name}”: its next call is refused.`
        : `The agent key “${key.name}” was already ${key.state}.`;
      if (wantsHtml(req)) return toSection(req, reply, msg, 'success');
      return reply.send({ msg, msgType: 'success', key });
    }),
  );
};

export default agentKeys;
