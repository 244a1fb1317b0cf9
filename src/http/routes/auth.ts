// Sign-in, sign-up, sign-out and first-run setup. GET serves the form, POST processes it (form-encoded or JSON).
// Passwords are typed on the main app only: a document host runs its owner's scripts, which could read a
// form served there. On a document host, GET /_/login and /_/signup send the browser to the main app
// (which comes back with a session for that host when it is the person's own), and their POSTs are 404.
// Sign-out works on every host and ends the login everywhere. Browsers get a 302 (back to the form with
// msg/msgType on failure); AJAX gets JSON {msg, msgType, ...} with the status.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import { badRequest, notFound } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { mayRunSetup } from '../../admin/use-cases.ts';
import { passwordLogin } from '../../accounts/login.ts';
import { createFirstSuperadmin, createPerson, SETUP_DONE_MSG } from '../../accounts/people.ts';
import { revokeLogin } from '../../accounts/sessions.ts';
import { grants, revokeGrants } from '../../events/revocations.ts';
import { clearSessionCookies, sessionTokenOf } from '../cookies.ts';
import { signIn } from '../sessions.ts';
import { createHomePage } from '../../nodes/tree.ts';
import { assertSignupOpen, instanceSettings, signupMode, useSignupInvite } from '../../admin/admin.ts';
import {
  MAX_RETURN,
  done,
  returnProblem,
  safeReturn,
  wantsHtml,
  bodyOf,
  formPost as formPostTo,
  optionalText,
  queryMsg,
  queryOf,
  queryText,
  sendPage,
} from '../io.ts';
import { withMessage } from '../messages.ts';
import { refuseCrossSite } from '../origin.ts';
import { isSetUp, markSetUp } from '../home.ts';
import { hostnameOf } from '../hosts.ts';
import { loginPage, logoutPage, setupPage, signupPage, type Msg, type SignupMode } from '../../ui/auth-pages.ts';

// ---------------------------------------------------------------- input

/** The forms' bodies, declared on their routes (a refusal goes back to the form: attachValidation + formPost);
 *  a required field left out is the handler's 400 `missing-field`, in the form's words. */
const bodies = {
  /** Sign-in takes `email` (its one field takes an email or a username) or `username`; sign-up and
   *  first-run setup take all three. `return` and `invite` stay in the body (read below). */
  credentials: z.looseObject({
    email: optionalText(limits.emailLength),
    username: optionalText(limits.usernameLength.max),
    password: optionalText(limits.password.maxLength),
  }),
};

// `return` and `invite` (body or query) keep small readers: pages read them again while answering a
// refusal, so those reads never refuse, and `refuseBadReturn` says what is wrong with a `return`.

/** The local `return` target from the body or the query, or undefined. */
function returnOf(req: FastifyRequest): string | undefined {
  const candidates = [bodyOf(req).return, queryOf(req).return];
  for (const c of candidates) {
    if (typeof c === 'string' && c.length <= MAX_RETURN) {
      const safe = safeReturn(c, '');
      if (safe) return safe;
    }
  }
  return undefined;
}

/** Sign-in and sign-up forms are the main app's: a document host sends the browser there, to come
 *  back through the session handshake (GET), and has no such POST. */
function mainAppOnly(
  req: FastifyRequest,
  reply: FastifyReply,
  s: Services,
  page: 'login' | 'signup',
): FastifyReply | null {
  if (req.site.kind === 'main') return null;
  if (req.method !== 'GET') throw notFound('Sign in on the main app.');
  const back = safeReturn(queryText(req, 'return'), '/');
  const start = `/_/session/start?host=${encodeURIComponent(hostnameOf(req))}&return=${encodeURIComponent(back)}`;
  const target = page === 'login' ? start : `/_/signup?return=${encodeURIComponent(start)}`;
  return reply.header('cache-control', 'no-store').redirect(s.config.baseUrl + target, 302);
}

/** The credentials as the route's schema parsed them (a refusal reached the form through formPost). */
const credentialsOf = (req: FastifyRequest) => req.body as z.output<typeof bodies.credentials>;

function newAccountFields(req: FastifyRequest) {
  const { email, username, password } = credentialsOf(req);
  if (!email) throw badRequest('Email is required.', 'missing-field');
  if (!username) throw badRequest('Username is required.', 'missing-field');
  if (!password) throw badRequest('Password is required.', 'missing-field');
  return { email, username, password };
}

// ---------------------------------------------------------------- routes

/** 400 `invalid-return` when the body or the query carries a `return` that is not a same-origin
 *  path: checked before any handler runs, so a refused target never creates a session. */
async function refuseBadReturn(req: FastifyRequest): Promise<void> {
  for (const c of [bodyOf(req).return, queryOf(req).return]) {
    if (c === undefined || c === '') continue;
    const problem = typeof c === 'string' ? returnProblem(c) : 'must be text';
    if (problem) throw badRequest(`The return address ${problem}.`, 'invalid-return');
  }
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  const { db } = s.database;
  // Every page and form of this plugin (login, signup, logout, setup) refuses a bad `return`.
  app.addHook('preHandler', refuseBadReturn);

  // Sign in.
  /** Form posts go back to their form, keeping the `return` target. */
  const formPost = (
    formPath: string | ((status: number) => string),
    render: Parameters<typeof formPostTo>[1],
    handler: Parameters<typeof formPostTo>[2],
    opts: { back?: number[] } = {},
  ) =>
    formPostTo((_req, status) => (typeof formPath === 'function' ? formPath(status) : formPath), render, handler, {
      returnTo: returnOf,
      ...opts,
    });
  const renderLogin = (req: FastifyRequest, msg?: Msg, signupsOpen?: boolean) =>
    loginPage({ msg, returnTo: returnOf(req), username: req.caller.actor?.username, signupsOpen });
  app.get(
    '/_/login',
    async (req, reply) =>
      mainAppOnly(req, reply, s, 'login') ??
      sendPage(reply, renderLogin(req, queryMsg(req), (await instanceSettings(s)).signups === 'open')),
  );
  const credentials = { schema: { body: bodies.credentials }, attachValidation: true };
  app.post(
    '/_/login',
    credentials,
    formPost('/_/login', renderLogin, async (req, reply) => {
      mainAppOnly(req, reply, s, 'login');
      await refuseCrossSite(req, s);
      const b = credentialsOf(req);
      const identifier = b.email ?? b.username;
      if (!identifier) throw badRequest('Enter your email or username.', 'missing-field');
      if (!b.password) throw badRequest('Enter your password.', 'missing-field');

      const who = await passwordLogin(s, req.ip, identifier, b.password);
      await signIn(req, reply, s, who.accountId);
      if (wantsHtml(req)) return reply.redirect(returnOf(req) ?? '/_/dashboard', 302);
      return done(req, reply, `Signed in as ${who.username}.`, { extra: { username: who.username } });
    }),
  );

  /** A new account gets its index.html at once; best effort (its owner is offered one later). */
  async function startHomePage(req: FastifyRequest, accountId: number) {
    try {
      await createHomePage(s, accountId, null);
    } catch (err) {
      req.log.warn({ err, accountId }, 'could not create the home page of a new account');
    }
  }

  // Sign up: a free developer account.
  /** The invitation a sign-up carries (`?invite=` on the page, a hidden field in its form). */
  const inviteOf = (req: FastifyRequest): string | undefined => {
    const v = bodyOf(req).invite ?? queryOf(req).invite;
    return typeof v === 'string' && v.length <= 200 ? v : undefined;
  };
  const renderSignup = (req: FastifyRequest, msg?: Msg, mode?: SignupMode) =>
    signupPage({ msg, returnTo: returnOf(req), username: req.caller.actor?.username, invite: inviteOf(req), mode });
  app.get('/_/signup', async (req, reply) => {
    const elsewhere = mainAppOnly(req, reply, s, 'signup');
    if (elsewhere) return elsewhere;
    if (!(await isSetUp(s))) return reply.redirect('/_/setup', 302);
    // Closed, or by invitation without one: said before any form.
    return sendPage(reply, renderSignup(req, queryMsg(req), await signupMode(s, inviteOf(req))));
  });
  app.post(
    '/_/signup',
    credentials,
    formPost(
      '/_/signup',
      renderSignup,
      async (req, reply) => {
        mainAppOnly(req, reply, s, 'signup');
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'signup');
        // Sign-ups may be closed, or by invitation only (src/admin/admin.ts); new accounts start on the
        // plan the administrator chose.
        const invitation = await assertSignupOpen(s, inviteOf(req));
        const input = newAccountFields(req);
        const { defaultPlan } = await instanceSettings(s);
        // The invitation is used up in the account's own transaction: one link, one account.
        const person = await createPerson(
          s,
          { ...input, plan: defaultPlan, accountType: 'dev' },
          invitation ? (trx) => useSignupInvite(s, trx, invitation.id) : undefined,
        );
        await signIn(req, reply, s, person.id);
        await startHomePage(req, person.id);
        if (wantsHtml(req)) return reply.redirect(returnOf(req) ?? '/_/dashboard', 302);
        return done(req, reply, `Welcome, ${person.username}.`, { status: 201, extra: { username: person.username } });
      },
      // A sign-up refused because sign-ups closed meanwhile goes back to the page, which says so (what was typed
      // is kept by the page's script).
      { back: [403] },
    ),
  );

  // Sign out: GET asks, POST ends the login (its main-app session and every host session of it) and
  // clears this host's auth and ownership cookies.
  app.get('/_/logout', async (req, reply) =>
    sendPage(reply, logoutPage({ msg: queryMsg(req), username: req.caller.actor?.username })),
  );
  app.post(
    '/_/logout',
    formPost(
      '/_/logout',
      (req, msg) => logoutPage({ msg, username: req.caller.actor?.username }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        const token = sessionTokenOf(req, s.config);
        // Every stream opened with a session of this login ends too.
        if (token) await revokeGrants(s, (await revokeLogin(db, token, s.clock.now())).map(grants.session));
        clearSessionCookies(req, reply, s.config);
        return done(req, reply, 'You are signed out.', { redirect: req.site.kind === 'main' ? '/_/login' : '/' });
      },
    ),
  );

  // First-run setup: the first account becomes the superadmin. Main app only, only while no account exists.
  app.get('/_/setup', async (req, reply) => {
    if (req.site.kind !== 'main') throw notFound();
    mayRunSetup(req.ctx);
    if (await isSetUp(s)) {
      if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, '/_/login', SETUP_DONE_MSG, 'error'), 302);
      throw notFound(SETUP_DONE_MSG);
    }
    return sendPage(reply, setupPage({ msg: queryMsg(req) }));
  });
  app.post(
    '/_/setup',
    credentials,
    formPost(
      (status) => (status === 409 ? '/_/login' : '/_/setup'),
      (_req, msg) => setupPage({ msg }),
      async (req, reply) => {
        if (req.site.kind !== 'main') throw notFound();
        mayRunSetup(req.ctx);
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'setup');
        const input = newAccountFields(req);
        const person = await createFirstSuperadmin(s, input);
        markSetUp(s);
        await signIn(req, reply, s, person.id);
        await startHomePage(req, person.id);
        if (wantsHtml(req)) return reply.redirect('/_/dashboard', 302);
        return done(req, reply, `Kiln is set up. Welcome, ${person.username}.`, {
          status: 201,
          extra: { username: person.username },
        });
      },
    ),
  );
};

export default plugin;
