// "Forgot password" for developers: a mailed link (the same answer whether or not an account uses the
// address), and choosing a new password through it.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import type { Msg } from '../../../ui/pages.ts';
import { requestDeveloperReset, resetPassword } from '../../../accounts/account.ts';
import { resetTokenValid } from '../../../apps/app-users.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { resetPage, resetRequestPage } from '../../../ui/account.ts';
import { done, formPost, queryMsg, sendPage, textParam, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { refuseCrossSite } from '../../origin.ts';
import { bodies } from './schemas.ts';
import { formBody } from './shared.ts';

const RESET_SENT =
  'If an account uses that address, a link to choose a new password is on its way. It works once, for an hour.';

const renderResetRequest = (req: FastifyRequest, msg?: Msg) =>
  resetRequestPage({ msg, username: req.ctx.caller.actor?.username });

const tokenParams = z.object({ token: z.string() });

const reset: RoutePlugin = async (app, { services: s }) => {
  /** A form anyone may post: another site's post is refused before its fields are read; a refused field goes
   *  back to the form (formPost). */
  const crossSiteFirst = <B extends z.ZodType>(body: B) => ({
    schema: { body },
    attachValidation: true,
    preValidation: async (req: FastifyRequest) => refuseCrossSite(req, s),
  });

  app.get('/_/reset', { schema: { querystring: z.looseObject({}) } }, async (req, reply) =>
    sendPage(reply, renderResetRequest(req, queryMsg(req))),
  );

  app.post(
    '/_/reset',
    crossSiteFirst(bodies.reset),
    formPost(
      () => '/_/reset',
      renderResetRequest,
      async (req, reply) => {
        const b = formBody(bodies.reset, req);
        await strictAttempt(s, req, reply, 'password-reset');
        // Not awaited: how long the mail takes must not tell whether the address has an account.
        void requestDeveloperReset(s, b.email, (token) => `${s.config.baseUrl}/_/reset/${token}`).catch((err) =>
          req.log.error({ err }, 'sending a password reset mail failed'),
        );
        return done(req, reply, RESET_SENT, { redirect: '/_/reset' });
      },
    ),
  );

  app.get('/_/reset/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const { token } = req.params;
    // The token stays off other sites' Referer; same-origin keeps the form's Origin (no-referrer
    // would make Chromium post it with `Origin: null`, which the cross-site check refuses).
    reply.header('referrer-policy', 'same-origin');
    return sendPage(reply, resetPage({ token, valid: await resetTokenValid(s, token), msg: queryMsg(req) }));
  });

  app.post(
    '/_/reset/:token',
    { ...crossSiteFirst(bodies.newPassword), schema: { params: tokenParams, body: bodies.newPassword } },
    formPost(
      (req) => `/_/reset/${encodeURIComponent(textParam(req, 'token'))}`,
      (req, msg) => resetPage({ token: textParam(req, 'token'), valid: true, msg }),
      async (req, reply) => {
        const who = await resetPassword(s, textParam(req, 'token'), formBody(bodies.newPassword, req).password);
        const msg = `Your password is set${who.username ? `, ${who.username}` : ''}. Sign in with it.`;
        if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, '/_/login', msg, 'success'), 302);
        return done(req, reply, msg);
      },
    ),
  );
};

export default reset;
