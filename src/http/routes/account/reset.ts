// "Forgot password" for developers: a mailed link (the same answer whether or not an account uses the
// address), and choosing a new password through it.
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../plugin.ts';
import type { Msg } from '../../../ui/pages.ts';
import { requestDeveloperReset, resetPassword } from '../../../accounts/account.ts';
import { resetTokenValid } from '../../../apps/app-users.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { resetPage, resetRequestPage } from '../../../ui/account.ts';
import { done, formPost, parse, queryMsg, sendPage, textParam, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { refuseCrossSite } from '../../origin.ts';
import { bodies } from './schemas.ts';

const RESET_SENT =
  'If an account uses that address, a link to choose a new password is on its way. It works once, for an hour.';

const renderResetRequest = (req: FastifyRequest, msg?: Msg) =>
  resetRequestPage({ msg, username: req.ctx.caller.actor?.username });

const reset: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/reset', async (req, reply) => sendPage(reply, renderResetRequest(req, queryMsg(req))));

  app.post(
    '/_/reset',
    formPost(
      () => '/_/reset',
      renderResetRequest,
      async (req, reply) => {
        await refuseCrossSite(req, s);
        const b = parse(bodies.reset, req.body);
        await strictAttempt(s, req, reply, 'password-reset');
        // Not awaited: how long the mail takes must not tell whether the address has an account.
        void requestDeveloperReset(s, b.email, (token) => `${s.config.baseUrl}/_/reset/${token}`).catch((err) =>
          req.log.error({ err }, 'sending a password reset mail failed'),
        );
        return done(req, reply, RESET_SENT, { redirect: '/_/reset' });
      },
    ),
  );

  app.get('/_/reset/:token', async (req, reply) => {
    const token = textParam(req, 'token');
    // The token stays off other sites' Referer; same-origin keeps the form's Origin (no-referrer
    // would make Chromium post it with `Origin: null`, which the cross-site check refuses).
    reply.header('referrer-policy', 'same-origin');
    return sendPage(reply, resetPage({ token, valid: await resetTokenValid(s, token), msg: queryMsg(req) }));
  });

  app.post(
    '/_/reset/:token',
    formPost(
      (req) => `/_/reset/${encodeURIComponent(textParam(req, 'token'))}`,
      (req, msg) => resetPage({ token: textParam(req, 'token'), valid: true, msg }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        const b = parse(bodies.newPassword, req.body);
        const who = await resetPassword(s, textParam(req, 'token'), b.password);
        const msg = `Your password is set${who.username ? `, ${who.username}` : ''}. Sign in with it.`;
        if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, '/_/login', msg, 'success'), 302);
        return done(req, reply, msg);
      },
    ),
  );
};

export default reset;
