// Where the account is signed in: ending one sign-in, or every one (this browser's too).
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { endSignIn, signOutEverywhere } from '../../../accounts/account.ts';
import { clearSessionCookies } from '../../cookies.ts';
import { done } from '../../io.ts';
import { ACCOUNT, developer, ended, idParams } from './shared.ts';

const signIns: RoutePlugin = async (app, { services: s }) => {
  app.post(`${ACCOUNT}/sessions/:id/end`, { schema: { params: idParams, body: z.unknown() } }, async (req, reply) => {
    const actor = developer(req, true);
    await ended(s, await endSignIn(s, actor.accountId, req.params.id));
    return done(req, reply, 'That browser is signed out.', { redirect: ACCOUNT });
  });

  app.post(`${ACCOUNT}/sessions/end-all`, { schema: { body: z.unknown() } }, async (req, reply) => {
    const actor = developer(req, true);
    await ended(s, await signOutEverywhere(s, actor.accountId));
    clearSessionCookies(req, reply, s.config);
    return done(req, reply, 'Signed out everywhere, this browser too.', { redirect: '/_/login' });
  });
};

export default signIns;
