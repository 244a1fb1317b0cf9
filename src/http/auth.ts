// Who is asking: the person behind the `auth_token` cookie, or nobody.
// (Sync keys are checked by the sync routes; share tokens by the document routes.)
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { actorForSessionToken } from '../accounts/actors.ts';
import { AUTH_COOKIE } from './cookies.ts';

export function registerAuth(app: FastifyInstance, s: Services) {
  app.decorateRequest('actor', null);
  app.addHook('onRequest', async (req) => {
    const token = req.cookies[AUTH_COOKIE];
    req.actor = token && token.length < 200 ? await actorForSessionToken(s.database.db, token, s.clock.now()) : null;
  });
}
