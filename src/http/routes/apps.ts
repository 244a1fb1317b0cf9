// Multi-tenant app pages, on the app's host (the app owner's document host, or its custom domain).
// `app` names the app by its path on that host (`todo.html`, `tools/todo.html`), in the query for
// GETs and in the body (or query) for POSTs. GET serves the form, POST processes it (form-encoded or
// JSON). Browsers get a 302 (back to the form with msg/msgType on a refusal); AJAX gets JSON.
//
//   GET  /_/app/signup?app=<path>   sign-up form
//   POST /_/app/signup              {app, email, password, username?} → an app_user account (username
//                                   generated when empty) with its own instance of the app; signed in;
//                                   a confirmation link mailed; 302 to the instance (AJAX: 201 JSON)
//   GET  /_/app/login?app=<path>    sign-in form
//   POST /_/app/login               {app, email (or username), password} → 302 to the caller's instance
//                                   of the app (an app user of it without one gets one); only app users
//                                   of that app: anyone else's email answers like an unknown one
//   GET  /_/app/reset?app=<path>    form asking for a reset link
//   POST /_/app/reset               {app, email} → the same answer whether or not an account uses the
//                                   email; if one does, a single-use link (1 hour) is mailed
//   GET  /_/app/reset/<token>       new-password form (400 page when the link is invalid or expired)
//   POST /_/app/reset/<token>       {password} → password set, email confirmed, other sessions ended,
//                                   signed in, 302 to the instance (only links of this host's app users)
//   GET  /_/app/confirm/<token>     confirms the email (`people.email_confirmed = 1`); a page linking
//                                   to the instance (AJAX: JSON)
//   POST /_/app/confirm             on the app user's own host, signed in with an unconfirmed email:
//                                   mails a new link (to the app's host)
//
// Rate limits: the general limiter counts every request to these pages (src/ratelimit/http.ts);
// the strict limiter (5 per hour per address) counts sign-ups and reset requests.
//
// This host runs the app owner's scripts, which could read what is typed on these pages: developers
// sign in on the main app (the pages link there), and nobody but an app user of this host's apps has a
// password checked, set or mailed for here (src/apps/app-users.ts).
//
// Instances live on the app user's own host: `<appuser>.<root>/<instance name>`. Sessions are per host
// (src/http/sessions.ts): signing in on the app's host gives the app user a session on their own host,
// through the session handshake (`signInUrl` in JSON answers; browsers are redirected through it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { NodeRow } from '../../nodes/tree.ts';
import { KilnError, badRequest, notFound, unauthorized } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { authorize, resourceOf } from '../../access/authorize.ts';
import { passwordLogin } from '../../accounts/login.ts';
import { personFacts, usernameOf } from '../../accounts/people.ts';
import { childPathOf, getNode } from '../../nodes/tree.ts';
import { appAt } from '../../apps/apps.ts';
import { createInstance, findInstance, signupInstance } from '../../apps/instances.ts';
import {
  assertEmailShape,
  confirmEmail,
  requestPasswordReset,
  resetAppUserPassword,
  appResetTokenValid,
  sendConfirmation,
  signUpOnApp,
  type AppLinks,
} from '../../apps/app-users.ts';
import { refuseCrossSite } from '../origin.ts';
import { handoff, signIn } from '../sessions.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { documentHostUrl, nodeUrlPath } from '../../core/urls.ts';
import {
  wantsHtml,
  bodyOf,
  field,
  formPost as formPostTo,
  queryMsg,
  queryOf,
  sendPage as sendFormPage,
  textParam,
} from '../io.ts';
import { withMessage } from '../messages.ts';
import { hostAccount, onlyOn } from '../hosts.ts';
import {
  appHref,
  appLoginPage,
  appNoticePage,
  appPageUrl,
  appResetPage,
  appResetRequestPage,
  appSignupPage,
  type AppRef,
} from '../../ui/apps.ts';

/** App pages send `Referrer-Policy: same-origin`: with no-referrer Chromium posts their forms with
 *  `Origin: null`, which the cross-site check refuses. */
function sendPage(reply: FastifyReply, body: string, status = 200) {
  return sendFormPage(reply.header('referrer-policy', 'same-origin'), body, status);
}

/** The `app` path from the body or the query (undefined when neither has one). */
function appPathOf(req: FastifyRequest): string | undefined {
  return field(bodyOf(req), 'app', 'App', limits.pathLength) ?? field(queryOf(req), 'app', 'App', limits.pathLength);
}

/** App form posts go back to their form; a 429 page carries the app pages' referrer policy. */
const formPost = (
  back: (req: FastifyRequest) => string,
  render: Parameters<typeof formPostTo>[1],
  handler: Parameters<typeof formPostTo>[2],
) => formPostTo(back, render, handler, { sendPage });

const refOf = (app: NodeRow): AppRef => ({ name: app.name, path: childPathOf(app) });

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'App pages are on the app’s own host.');
  /** Where developers sign in (never on an app's host). */
  const mainLogin = `${s.config.baseUrl}/_/login`;
  /** App pages answer on document hosts only (an app is always some account's document). */
  function appHostOnly(req: FastifyRequest): number {
    return hostAccount(req);
  }

  /** The app named by the request: `signup` needs signups on; the others any visible document. */
  async function appOf(req: FastifyRequest, action: 'signup' | 'view'): Promise<NodeRow> {
    const accountId = appHostOnly(req);
    const path = appPathOf(req);
    if (!path) throw notFound('Which app? Add ?app=<the app’s path> to the address.');
    const node = await appAt(s, accountId, path, { signupsOnly: action === 'signup' });
    authorize({ actor: req.actor }, resourceOf(node), action);
    return node;
  }

  /** The app when one is named and visible, else undefined (pages that work without one). */
  async function optionalApp(req: FastifyRequest): Promise<NodeRow | undefined> {
    if (!appPathOf(req)) return undefined;
    try {
      return await appOf(req, 'view');
    } catch (err) {
      if (err instanceof KilnError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** The base URL of this request's host, built from configuration (never from a spoofable header
   *  on Kiln's own hosts; a custom domain was matched against the active domains). */
  function hostUrl(req: FastifyRequest): string {
    if (req.site.kind === 'account') return documentHostUrl(s.config, req.site.username);
    if (req.site.kind === 'domain') return `${s.config.secure ? 'https' : 'http'}://${req.site.domain}`;
    return s.config.baseUrl;
  }

  function linksFor(req: FastifyRequest, app: NodeRow): AppLinks {
    return { hostUrl: hostUrl(req), appName: app.name, appPath: childPathOf(app) };
  }

  /** The app an app user signed up on (404 when there is none). */
  async function signupAppOf(accountId: number): Promise<NodeRow> {
    const person = await personFacts(s, accountId);
    const node = person?.signupAppId ? await getNode(s, person.signupAppId) : undefined;
    if (!node) throw notFound('There is no app to confirm an email for.');
    return node;
  }

  /** Links of an app on its owner's host, built from configuration. */
  async function appLinksOf(app: NodeRow): Promise<AppLinks> {
    return {
      hostUrl: documentHostUrl(s.config, await usernameOf(s, app.owner_id)),
      appName: app.name,
      appPath: childPathOf(app),
    };
  }

  const instanceUrl = (username: string, instance: NodeRow) =>
    documentHostUrl(s.config, username) + nodeUrlPath(instance);

  /** Where a signed-in person goes for this app: their instance (an app user of it without one gets
   *  one while the app takes signups), else the app itself. */
  async function destination(req: FastifyRequest, accountId: number, username: string, app: NodeRow): Promise<string> {
    let instance = await findInstance(s, accountId, app.id);
    if (!instance && app.enable_signups === 1) {
      const person = await personFacts(s, accountId);
      if (person?.accountType === 'app_user' && person.signupAppId === app.id)
        instance = await createInstance(s, accountId, app.id, { reuseExisting: true });
    }
    return instance ? instanceUrl(username, instance) : hostUrl(req) + appHref(refOf(app));
  }

  /** The account's username and its instance of the app it signed up on (for pages after a link). */
  async function ownInstanceUrl(accountId: number): Promise<string | undefined> {
    const person = await personFacts(s, accountId);
    const instance = await signupInstance(s, accountId);
    return person && instance ? instanceUrl(person.username, instance) : undefined;
  }

  // ------------------------------------------------------------ sign up

  app.get('/_/app/signup', async (req, reply) => {
    const node = await appOf(req, 'signup');
    const ref = refOf(node);
    let signedIn: { username: string; instanceUrl?: string } | undefined;
    if (req.actor) {
      const instance = await findInstance(s, req.actor.accountId, node.id);
      signedIn = {
        username: req.actor.username,
        instanceUrl: instance ? instanceUrl(req.actor.username, instance) : undefined,
      };
    }
    return sendPage(reply, appSignupPage({ app: ref, msg: queryMsg(req), signedIn, mainLogin }));
  });

  app.post(
    '/_/app/signup',
    formPost(
      (req) => `/_/app/signup?app=${encodeURIComponent(appPathOf(req) ?? '')}`,
      (req, msg) => appSignupPage({ app: { name: appPathOf(req) ?? '', path: appPathOf(req) ?? '' }, msg, mainLogin }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'app-signup');
        const node = await appOf(req, 'signup');
        const body = bodyOf(req);
        const email = field(body, 'email', 'Email', limits.emailLength);
        const password = field(body, 'password', 'Password', limits.password.maxLength);
        const username = field(body, 'username', 'Username', limits.usernameLength.max)?.trim();
        if (!email) throw badRequest('Email is required.', 'missing-field');
        if (!password) throw badRequest('Password is required.', 'missing-field');
        const { person, instance } = await signUpOnApp(s, {
          app: node,
          email,
          password,
          username: username || undefined,
          links: linksFor(req, node),
        });
        const login = await signIn(req, reply, s, person.id);
        const url = instanceUrl(person.username, instance);
        // The app user's session lives on their own host: the browser goes there through the handshake.
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        return reply.code(201).send({
          signInUrl: next,
          msg: `Welcome, ${person.username}. Your copy is ${instance.name}; confirm your email (we sent a link) to save it.`,
          msgType: 'success',
          username: person.username,
          emailConfirmed: false,
          instance: { id: instance.id, name: instance.name, url, sourceNodeId: node.id },
        });
      },
    ),
  );

  // ------------------------------------------------------------ sign in

  app.get('/_/app/login', async (req, reply) => {
    const node = await appOf(req, 'view');
    return sendPage(reply, appLoginPage({ app: refOf(node), msg: queryMsg(req), mainLogin }));
  });

  app.post(
    '/_/app/login',
    formPost(
      (req) => `/_/app/login?app=${encodeURIComponent(appPathOf(req) ?? '')}`,
      (req, msg) => appLoginPage({ app: { name: appPathOf(req) ?? '', path: appPathOf(req) ?? '' }, msg, mainLogin }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        const node = await appOf(req, 'view');
        const body = bodyOf(req);
        const identifier =
          field(body, 'email', 'Email', limits.emailLength) ??
          field(body, 'username', 'Username', limits.usernameLength.max);
        const password = field(body, 'password', 'Password', limits.password.maxLength);
        if (!identifier) throw badRequest('Enter your email or username.', 'missing-field');
        if (!password) throw badRequest('Enter your password.', 'missing-field');
        // Only this app's users: a developer's password is never checked here (it belongs on the main
        // app's sign-in page). An app user's attempts count with the main page's, per address and account.
        const who = await passwordLogin(s, req.ip, identifier, password, { kind: 'app', appId: node.id });
        const login = await signIn(req, reply, s, who.accountId);
        const url = await destination(req, who.accountId, who.username, node);
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        return reply.send({
          msg: `Signed in as ${who.username}.`,
          msgType: 'success',
          username: who.username,
          url,
          signInUrl: next,
        });
      },
    ),
  );

  // ------------------------------------------------------------ password reset

  const RESET_SENT =
    'If an account uses that email, we sent it a link to choose a new password. The link works for one hour.';

  app.get('/_/app/reset', async (req, reply) => {
    const node = await appOf(req, 'view');
    return sendPage(reply, appResetRequestPage({ app: refOf(node), msg: queryMsg(req), mainLogin }));
  });

  app.post(
    '/_/app/reset',
    formPost(
      (req) => `/_/app/reset?app=${encodeURIComponent(appPathOf(req) ?? '')}`,
      (req, msg) =>
        appResetRequestPage({ app: { name: appPathOf(req) ?? '', path: appPathOf(req) ?? '' }, msg, mainLogin }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'password-reset');
        const node = await appOf(req, 'view');
        const email = field(bodyOf(req), 'email', 'Email', limits.emailLength);
        if (!email) throw badRequest('Email is required.', 'missing-field');
        assertEmailShape(email);
        // Not awaited: how long the lookup and the mail take must not tell whether the account exists.
        void requestPasswordReset(s, email, node.id, linksFor(req, node)).catch((err) =>
          req.log.error(err, 'password reset mail failed'),
        );
        if (wantsHtml(req))
          return reply.redirect(withMessage(s.secret, appPageUrl('login', refOf(node)), RESET_SENT, 'success'), 302);
        return reply.send({ msg: RESET_SENT, msgType: 'success' });
      },
    ),
  );

  const tokenOf = (req: FastifyRequest) => {
    const t = textParam(req, 'token');
    if (!/^[A-Za-z0-9_-]{10,200}$/.test(t)) throw badRequest('This link is invalid or has expired.', 'invalid-token');
    return t;
  };

  app.get('/_/app/reset/:token', async (req, reply) => {
    const hostAccountId = appHostOnly(req);
    const node = await optionalApp(req);
    const ref = node ? refOf(node) : undefined;
    let token = '';
    try {
      token = tokenOf(req);
    } catch {
      // falls through to the invalid-link page
    }
    if (!token || !(await appResetTokenValid(s, token, hostAccountId))) {
      const again = ref ? { href: appPageUrl('reset', ref), label: 'Ask for a new link' } : undefined;
      if (!wantsHtml(req)) throw badRequest('This link is invalid or has expired.', 'invalid-token');
      return sendPage(
        reply,
        appNoticePage({
          title: 'Link expired',
          text: 'This link is invalid, was already used, or has expired.',
          app: ref,
          link: again,
        }),
        400,
      );
    }
    return sendPage(reply, appResetPage({ app: ref, token, msg: queryMsg(req) }));
  });

  app.post(
    '/_/app/reset/:token',
    formPost(
      (req) =>
        `/_/app/reset/${encodeURIComponent(textParam(req, 'token'))}${appPathOf(req) ? `?app=${encodeURIComponent(appPathOf(req)!)}` : ''}`,
      (req, msg) => appResetPage({ token: textParam(req, 'token'), msg }),
      async (req, reply) => {
        const hostAccountId = appHostOnly(req);
        await refuseCrossSite(req, s);
        const token = tokenOf(req);
        const password = field(bodyOf(req), 'password', 'Password', limits.password.maxLength);
        if (!password) throw badRequest('Password is required.', 'missing-field');
        const { accountId } = await resetAppUserPassword(s, token, password, hostAccountId);
        const login = await signIn(req, reply, s, accountId);
        const node = await optionalApp(req);
        const username = await usernameOf(s, accountId);
        const url = node
          ? await destination(req, accountId, username, node)
          : ((await ownInstanceUrl(accountId)) ?? `${hostUrl(req)}/`);
        const msg = 'Your password is changed and you are signed in.';
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        return reply.send({ msg, msgType: 'success', username, url, signInUrl: next });
      },
    ),
  );

  // ------------------------------------------------------------ email confirmation

  app.get('/_/app/confirm/:token', async (req, reply) => {
    appHostOnly(req);
    const token = tokenOf(req);
    let accountId: number;
    try {
      ({ accountId } = await confirmEmail(s, token));
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      return sendPage(reply, appNoticePage({ title: 'Link expired', text: err.message }), err.status);
    }
    const url = await ownInstanceUrl(accountId);
    const msg = 'Your email is confirmed. You can now save your copy.';
    if (!wantsHtml(req)) return reply.send({ msg, msgType: 'success', ...(url ? { url } : {}) });
    return sendPage(
      reply,
      appNoticePage({
        title: 'Email confirmed',
        text: msg,
        link: url ? { href: url, label: 'Open your copy' } : undefined,
      }),
    );
  });

  app.post(
    '/_/app/confirm',
    formPost(
      (req) => `/_/app/login?app=${encodeURIComponent(appPathOf(req) ?? '')}`,
      (req, msg) => appLoginPage({ app: { name: appPathOf(req) ?? '', path: appPathOf(req) ?? '' }, msg, mainLogin }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        // Asked on the app user's own host (where their session is); the link goes to the app's host.
        if (!req.actor) throw unauthorized();
        const node = await signupAppOf(req.actor.accountId);
        const msg = req.actor.emailConfirmed
          ? 'Your email is already confirmed.'
          : `We sent a new confirmation link to ${req.actor.email}.`;
        if (!req.actor.emailConfirmed)
          await sendConfirmation(s, { accountId: req.actor.accountId, email: req.actor.email }, await appLinksOf(node));
        if (wantsHtml(req))
          return sendPage(reply, appNoticePage({ title: 'Confirm your email', text: msg, app: refOf(node) }));
        return reply.send({ msg, msgType: 'success' });
      },
    ),
  );
};

export default plugin;
