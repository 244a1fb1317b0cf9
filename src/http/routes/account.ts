// A developer's own account, on the main app. Bodies may be JSON or form-encoded; browsers get pages
// and redirects with a message, programs JSON {msg, msgType, ...}.
//
//   GET  /_/account                          the page (JSON {account, logins} for programs)
//   POST /_/account/password                 {current, password}: every other sign-in ends
//   POST /_/account/username                 {username, password}: the host moves; the old one redirects 30 days
//   POST /_/account/email                    {email, password}: a confirmation link to the new address
//   GET  /_/account/email/:token, POST       confirm the new address (the old one is told)
//   POST /_/account/sessions/:id/end         ends one sign-in (and its document-host sessions)
//   POST /_/account/sessions/end-all         ends every sign-in, this one included
//   POST /_/account/delete                   {confirm: <username>, password}: the account, for good
//   GET  /_/account/export[?versions=1]      the whole tree as a zip (src/accounts/export.ts)
//   POST /_/account/import                   multipart `file` (and `folder`, optional): a zip into the tree, all or nothing
//   GET  /_/reset, POST /_/reset {email}     "forgot password": mails a link (same answer either way)
//   GET  /_/reset/:token, POST {password}    choose a new password through the link
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { Actor } from '../../access/actor.ts';
import { authorizeActor } from '../../access/authorize.ts';
import {
  changePassword,
  changeUsername,
  confirmEmailChange,
  deleteAccount,
  emailChangeOf,
  requestEmailChange,
  endSignIn,
  requestDeveloperReset,
  resetPassword,
  signIns,
  signOutEverywhere,
} from '../../accounts/account.ts';
import { resetTokenValid } from '../../apps/app-users.ts';
import { personRow } from '../../store/accounts.ts';
import { grants, revokeGrants } from '../../events/revocations.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { assertSameOrigin, refuseCrossSite } from '../origin.ts';
import { clearSessionCookies } from '../cookies.ts';
import { withMessage } from '../messages.ts';
import { onlyOn } from '../hosts.ts';
import { documentHostUrl } from '../../core/urls.ts';
import {
  done,
  flag,
  formPost,
  idParam,
  parse,
  queryMsg,
  queryText,
  sendPage,
  textParam,
  wantsHtml,
  withUploadedFile,
} from '../io.ts';
import { accountPage, emailChangePage, resetPage, resetRequestPage } from '../../ui/account.ts';
import { exportTree, importTree, lastExport } from '../../accounts/export.ts';
import { createReadStream } from 'node:fs';
import multipart from '@fastify/multipart';
import { KilnError, notFound } from '../../errors.ts';
import { PLAN_NAMES } from '../../billing/plans.ts';
import { limits } from '../../limits.ts';

const ACCOUNT = '/_/account';
const RESET_SENT =
  'If an account uses that address, a link to choose a new password is on its way. It works once, for an hour.';

const bodies = {
  password: z.object({
    current: z.string().max(limits.password.maxLength),
    password: z.string().max(limits.password.maxLength),
  }),
  delete: z.object({
    confirm: z.string().max(limits.usernameLength.max * 2),
    password: z.string().max(limits.password.maxLength),
    exportFirst: flag.default(false),
  }),
  reset: z.object({ email: z.string().max(limits.emailLength) }),
  username: z.object({
    username: z.string().max(limits.usernameLength.max * 2),
    password: z.string().max(limits.password.maxLength),
  }),
  email: z.object({ email: z.string().max(limits.emailLength), password: z.string().max(limits.password.maxLength) }),
  newPassword: z.object({ password: z.string().max(limits.password.maxLength) }),
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main', 'Your account is on the main app.');

  /** A signed-in developer (app users and strangers are refused by the access table). */
  function developer(req: FastifyRequest, write: boolean): Actor {
    if (write) assertSameOrigin(req);
    return authorizeActor({ actor: req.actor }, null, 'manage');
  }

  const ended = (ids: number[]) => revokeGrants(s, ids.map(grants.session));

  app.get(ACCOUNT, async (req, reply) => {
    const actor = developer(req, false);
    const logins = await signIns(s, actor.accountId, actor.loginId);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req))
      return {
        msg: '',
        msgType: 'success',
        account: { username: actor.username, email: actor.email, plan: actor.plan },
        logins,
      };
    return sendPage(
      reply,
      accountPage({
        username: actor.username,
        email: actor.email,
        plan: PLAN_NAMES[actor.plan],
        logins,
        msg: queryMsg(req),
      }),
    );
  });

  /** The page itself, with a refusal in words (a form post that failed). */
  const renderAccount = (req: FastifyRequest, msg: { text: string; type: string }) =>
    accountPage({
      username: req.actor?.username ?? '',
      email: req.actor?.email ?? '',
      plan: req.actor ? PLAN_NAMES[req.actor.plan] : '',
      logins: [],
      msg,
    });

  app.post(
    `${ACCOUNT}/password`,
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const b = parse(bodies.password, req.body);
        await ended(await changePassword(s, actor.accountId, actor.loginId, { current: b.current, next: b.password }));
        return done(req, reply, 'Password changed. Every other browser is signed out.', { redirect: ACCOUNT });
      },
    ),
  );

  app.post(
    `${ACCOUNT}/username`,
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const b = parse(bodies.username, req.body);
        const moved = await changeUsername(s, actor.accountId, b);
        return done(
          req,
          reply,
          `You are ${moved.to} now: your documents are at ${documentHostUrl(s.config, moved.to)}/, and the old address leads there for 30 days.`,
          { redirect: ACCOUNT, extra: { username: moved.to } },
        );
      },
    ),
  );

  app.post(
    `${ACCOUNT}/email`,
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const b = parse(bodies.email, req.body);
        const email = await requestEmailChange(
          s,
          actor.accountId,
          b,
          (t) => `${s.config.baseUrl}${ACCOUNT}/email/${t}`,
        );
        return done(
          req,
          reply,
          `A confirmation link is on its way to ${email}; your address changes when you open it.`,
          {
            redirect: ACCOUNT,
          },
        );
      },
    ),
  );

  app.get(`${ACCOUNT}/email/:token`, async (req, reply) => {
    const token = textParam(req, 'token');
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
  app.post(`${ACCOUNT}/email/:token`, async (req, reply) => {
    await refuseCrossSite(req, s);
    const changed = await confirmEmailChange(s, textParam(req, 'token'));
    const msg = `The email of ${changed.username} is ${changed.email} now.`;
    return done(req, reply, msg, { redirect: req.actor ? ACCOUNT : '/_/login' });
  });

  app.post(`${ACCOUNT}/sessions/:id/end`, async (req, reply) => {
    const actor = developer(req, true);
    await ended(await endSignIn(s, actor.accountId, idParam(req)));
    return done(req, reply, 'That browser is signed out.', { redirect: ACCOUNT });
  });

  app.post(`${ACCOUNT}/sessions/end-all`, async (req, reply) => {
    const actor = developer(req, true);
    await ended(await signOutEverywhere(s, actor.accountId));
    clearSessionCookies(req, reply, s.config);
    return done(req, reply, 'Signed out everywhere, this browser too.', { redirect: '/_/login' });
  });

  app.post(
    `${ACCOUNT}/delete`,
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const b = parse(bodies.delete, req.body);
        const gone = await deleteAccount(s, actor.accountId, b);
        await ended(gone.ended);
        clearSessionCookies(req, reply, s.config);
        const mailed = gone.exported ? ' A link to its export is on its way to your email (7 days).' : '';
        return done(req, reply, `The account ${gone.username} and everything in it are deleted.${mailed}`, {
          redirect: '/',
        });
      },
    ),
  );

  // ---------------------------------------------------------------- export and import

  app.get(`${ACCOUNT}/export`, async (req, reply) => {
    const actor = developer(req, false);
    const versions = queryText(req, 'versions') === '1';
    const stream = await exportTree(s, actor.accountId, actor.accountId, { versions });
    const day = s.clock.now().toISOString().slice(0, 10);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="kiln-${actor.username}-${day}.zip"`)
      .send(stream);
  });

  await app.register(multipart, { limits: { fileSize: limits.body.jsonSyncAndUpload, files: 1, fields: 5 } });
  app.post(
    `${ACCOUNT}/import`,
    { bodyLimit: limits.body.jsonSyncAndUpload },
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const r = await withUploadedFile(req, 'file', (zip, fields) =>
          importTree(s, actor.accountId, actor.accountId, zip, { folder: fields.folder?.slice(0, limits.pathLength) }),
        );
        const msg = `Imported ${r.documents} document${r.documents === 1 ? '' : 's'}, ${r.uploads} file${r.uploads === 1 ? '' : 's'} and ${r.folders} folder${r.folders === 1 ? '' : 's'}.`;
        // `next`: where the page's script goes on, with the message (signed, as a redirect's is).
        const next = withMessage(req.messageSecret, '/_/dashboard', msg, 'success');
        return done(req, reply, msg, { redirect: '/_/dashboard', extra: { imported: r, next } });
      },
    ),
  );

  /** A last export, made before an account was deleted (the link mailed then; 7 days). */
  app.get('/_/export/:token', async (req, reply) => {
    const file = await lastExport(s, textParam(req, 'token'));
    if (!file) throw notFound('This export link is not valid (it expired after 7 days, or never existed).');
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('content-type', 'application/zip')
      .header('content-disposition', 'attachment; filename="kiln-export.zip"')
      .send(createReadStream(file));
  });

  // ---------------------------------------------------------------- forgot password

  const renderResetRequest = (req: FastifyRequest, msg?: { text: string; type: string }) =>
    resetRequestPage({ msg, username: req.actor?.username });
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
        const { accountId } = await resetPassword(s, textParam(req, 'token'), b.password);
        const who = await personRow(s.database.db, { id: accountId });
        const msg = `Your password is set${who ? `, ${who.username}` : ''}. Sign in with it.`;
        if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, '/_/login', msg, 'success'), 302);
        return done(req, reply, msg);
      },
    ),
  );
};

export default plugin;
