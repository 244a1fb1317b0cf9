// Forgotten passwords on an app's host: asking for a link, and choosing a new password through it
// (only for app users of this host's apps).
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../plugin.ts';
import { badRequest } from '../../../errors.ts';
import { usernameOf } from '../../../accounts/people.ts';
import {
  appResetTokenValid,
  assertEmailShape,
  requestPasswordReset,
  resetAppUserPassword,
} from '../../../apps/app-users.ts';
import { appNoticePage, appPageUrl, appResetPage, appResetRequestPage } from '../../../ui/apps.ts';
import { queryMsg, textParam, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { hostAccount } from '../../hosts.ts';
import { refuseCrossSite } from '../../origin.ts';
import { handoff, signIn } from '../../sessions.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { bodies, bodyOf, pageQuery, tokenParams } from './schemas.ts';
import {
  appOf,
  appPathOf,
  backTo,
  destination,
  formPost,
  hostUrl,
  linksFor,
  mainLogin,
  namedApp,
  optionalApp,
  ownInstanceUrl,
  refOf,
  sendPage,
  tokenOf,
} from './shared.ts';

const RESET_SENT =
  'If an account uses that email, we sent it a link to choose a new password. The link works for one hour.';

/** A refused new password goes back to its link's form (with the app, when one was named). */
function backToLink(req: FastifyRequest): string {
  const app = appPathOf(req);
  return `/_/app/reset/${encodeURIComponent(textParam(req, 'token'))}${app ? `?app=${encodeURIComponent(app)}` : ''}`;
}

const reset: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/app/reset', { schema: { querystring: pageQuery } }, async (req, reply) => {
    const node = await appOf(req, 'view');
    return sendPage(reply, appResetRequestPage({ app: refOf(node), msg: queryMsg(req), mainLogin: mainLogin(s) }));
  });

  app.post(
    '/_/app/reset',
    { schema: { body: bodies.resetRequest }, attachValidation: true },
    formPost(
      backTo('reset'),
      (req, msg) => appResetRequestPage({ app: namedApp(req), msg, mainLogin: mainLogin(s) }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'password-reset');
        const node = await appOf(req, 'view');
        const { email } = bodyOf(bodies.resetRequest, req);
        if (!email) throw badRequest('Email is required.', 'missing-field');
        assertEmailShape(email);
        // Not awaited: how long the lookup and the mail take must not tell whether the account exists.
        void requestPasswordReset(s, email, node.id, linksFor(s, req, node)).catch((err) =>
          req.log.error(err, 'password reset mail failed'),
        );
        if (wantsHtml(req))
          return reply.redirect(withMessage(s.secret, appPageUrl('login', refOf(node)), RESET_SENT, 'success'), 302);
        return reply.send({ msg: RESET_SENT, msgType: 'success' });
      },
    ),
  );

  app.get('/_/app/reset/:token', { schema: { params: tokenParams, querystring: pageQuery } }, async (req, reply) => {
    const hostAccountId = hostAccount(req);
    const node = await optionalApp(req);
    const ref = node ? refOf(node) : undefined;
    let token = '';
    try {
      token = tokenOf(req);
    } catch {
      // falls through to the invalid-link page
    }
    if (token && (await appResetTokenValid(s, token, hostAccountId)))
      return sendPage(reply, appResetPage({ app: ref, token, msg: queryMsg(req) }));
    if (!wantsHtml(req)) throw badRequest('This link is invalid or has expired.', 'invalid-token');
    const again = ref ? { href: appPageUrl('reset', ref), label: 'Ask for a new link' } : undefined;
    const text = 'This link is invalid, was already used, or has expired.';
    return sendPage(reply, appNoticePage({ title: 'Link expired', text, app: ref, link: again }), 400);
  });

  app.post(
    '/_/app/reset/:token',
    { schema: { params: tokenParams, body: bodies.newPassword }, attachValidation: true },
    formPost(
      backToLink,
      (req, msg) => appResetPage({ token: textParam(req, 'token'), msg }),
      async (req, reply) => {
        const hostAccountId = hostAccount(req);
        await refuseCrossSite(req, s);
        const token = tokenOf(req);
        const { password } = bodyOf(bodies.newPassword, req);
        if (!password) throw badRequest('Password is required.', 'missing-field');
        const { accountId } = await resetAppUserPassword(s, token, password, hostAccountId);
        const login = await signIn(req, reply, s, accountId);
        const node = await optionalApp(req);
        const username = await usernameOf(s, accountId);
        const url = node
          ? await destination(s, req, { accountId, username }, node)
          : ((await ownInstanceUrl(s, accountId)) ?? `${hostUrl(s, req)}/`);
        const msg = 'Your password is changed and you are signed in.';
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        return reply.send({ msg, msgType: 'success', username, url, signInUrl: next });
      },
    ),
  );
};

export default reset;
