// What signs the account in, each change with the password: the password, the username (the host
// moves), the email (through a link to the new address).
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import {
  changePassword,
  changeUsername,
  confirmEmailChange,
  emailChangeOf,
  requestEmailChange,
} from '../../../accounts/account.ts';
import { KilnError } from '../../../errors.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { emailChangePage } from '../../../ui/account.ts';
import { done, formPost, sendPage, wantsHtml } from '../../io.ts';
import { refuseCrossSite } from '../../origin.ts';
import { bodies } from './schemas.ts';
import { ACCOUNT, developer, developerForm, ended, formBody, renderAccount } from './shared.ts';

const tokenParams = z.object({ token: z.string() });

const credentials: RoutePlugin = async (app, { services: s }) => {
  app.post(
    `${ACCOUNT}/password`,
    developerForm(bodies.password),
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const { current, password } = formBody(bodies.password, req);
        await ended(s, await changePassword(s, actor.accountId, actor.loginId, { current, next: password }));
        return done(req, reply, 'Password changed. Every other browser is signed out.', { redirect: ACCOUNT });
      },
    ),
  );

  app.post(
    `${ACCOUNT}/username`,
    developerForm(bodies.username),
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const moved = await changeUsername(s, actor.accountId, formBody(bodies.username, req));
        const msg = `You are ${moved.to} now: your documents are at ${documentHostUrl(s.config, moved.to)}/, and the old address leads there for 30 days.`;
        return done(req, reply, msg, { redirect: ACCOUNT, extra: { username: moved.to } });
      },
    ),
  );

  app.post(
    `${ACCOUNT}/email`,
    developerForm(bodies.email),
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const b = formBody(bodies.email, req);
        const email = await requestEmailChange(
          s,
          actor.accountId,
          b,
          (t) => `${s.config.baseUrl}${ACCOUNT}/email/${t}`,
        );
        const msg =
          email === actor.email
            ? `A confirmation link is on its way to ${email}; your address is confirmed when you open it.`
            : `A confirmation link is on its way to ${email}; your address changes when you open it.`;
        return done(req, reply, msg, { redirect: ACCOUNT });
      },
    ),
  );

  app.get(`${ACCOUNT}/email/:token`, { schema: { params: tokenParams } }, async (req, reply) => {
    const { token } = req.params;
    reply.header('referrer-policy', 'same-origin');
    try {
      const change = await emailChangeOf(s, token);
      return sendPage(reply, emailChangePage({ token, email: change.email }));
    } catch (err) {
      if (err instanceof KilnError && wantsHtml(req))
        return sendPage(reply, emailChangePage({ token, error: err.message }), err.status);
      throw err;
    }
  });

  const confirm = { schema: { params: tokenParams, body: z.unknown() } };
  app.post(`${ACCOUNT}/email/:token`, confirm, async (req, reply) => {
    await refuseCrossSite(req, s);
    const changed = await confirmEmailChange(s, req.params.token);
    const msg = `The email of ${changed.username} is ${changed.email} now.`;
    return done(req, reply, msg, { redirect: req.ctx.caller.actor ? ACCOUNT : '/_/login' });
  });
};

export default credentials;
