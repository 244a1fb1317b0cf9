// Sign-in, sign-up, sign-out and first-run setup. GET serves the form, POST processes it (form-encoded or JSON).
// These routes answer on every host (main app, document hosts, custom domains), so a stranger sent to
// `/_/login` from a document host signs in right there. Browsers get a 302 (back to the form with
// msg/msgType on failure); AJAX gets JSON {msg, msgType, ...} with the status.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './index.ts';
import type { Services } from '../../services.ts';
import { KilnError, badRequest, forbidden, notFound } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { authorize } from '../../access/authorize.ts';
import { passwordLogin } from '../../accounts/login.ts';
import { countAccounts, createFirstSuperadmin, createPerson, SETUP_DONE_MSG } from '../../accounts/people.ts';
import { createSession, revokeSession } from '../../accounts/sessions.ts';
import { AUTH_COOKIE, clearSessionCookies, setAuthCookie } from '../cookies.ts';
import { hostnameOf } from '../hosts.ts';
import { done, safeReturn, wantsHtml, withMessage } from '../answers.ts';
import { bodyOf, field, formPost as formPostTo, queryMsg, queryOf, sendPage } from '../forms.ts';
import { landingPage, loginPage, logoutPage, setupPage, signupPage, type Msg } from '../../ui/auth-pages.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const MAX_RETURN = 2048;

// ---------------------------------------------------------------- helpers other routes may use

/** Starts a 30-day session for the account and sets the `auth_token` cookie on this request's cookie domain. */
export async function signIn(req: FastifyRequest, reply: FastifyReply, s: Services, accountId: number): Promise<void> {
  const { token, expiresAt } = await createSession(s.database.db, accountId, s.clock.now());
  setAuthCookie(req, reply, s.config, token, expiresAt);
}

/** Refuses (403) a POST whose `Origin` is neither the main app nor a document host of this Kiln. */
export async function refuseCrossSite(req: FastifyRequest, s: Services): Promise<void> {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host = '';
  try {
    host = new URL(origin).hostname.toLowerCase();
  } catch {
    // `Origin: null` (sandboxed frames, file://) and garbage are cross-site.
  }
  const root = s.config.rootHostname;
  if (host) {
    if (host === root || LOOPBACK.has(host) || host === hostnameOf(req)) return;
    if (host.endsWith('.' + root) && !host.slice(0, -root.length - 1).includes('.')) return;
    const domain = await s.database.db
      .selectFrom('domains')
      .select('id')
      .where('domain', '=', host)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (domain) return;
  }
  throw forbidden('Cross-site form posts are refused.', 'cross-site');
}

/** The main app's `/`: first-run setup while no account exists, the dashboard when signed in, else a landing page.
 *  The documents plugin calls this for GET/HEAD `/` on the main host. */
export async function mainHome(req: FastifyRequest, reply: FastifyReply, s: Services): Promise<FastifyReply> {
  if (!(await isSetUp(s))) return reply.redirect('/_/setup', 302);
  if (req.actor) return reply.redirect('/_/dashboard', 302);
  return sendPage(reply, landingPage({ msg: queryMsg(req) }));
}

// ---------------------------------------------------------------- small parts

/** Once an account exists the instance stays set up; remember it so `/` costs no query. */
const setUpInstances = new WeakSet<Services>();
async function isSetUp(s: Services): Promise<boolean> {
  if (setUpInstances.has(s)) return true;
  if ((await countAccounts(s)) === 0) return false;
  setUpInstances.add(s);
  return true;
}

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

/** Where a browser goes after signing in when no `return` was given. */
function afterSignIn(req: FastifyRequest, s: Services): string {
  if (req.site.kind === 'main') return '/_/dashboard';
  // The session cookie covers the root domain and its subdomains, so the main app's dashboard is signed in too.
  if (req.site.kind === 'account') return `${s.config.baseUrl}/_/dashboard`;
  return '/';
}

const EMAIL_MAX = limits.emailLength;
const PASSWORD_MAX = limits.password.maxLength;
const USERNAME_MAX = limits.usernameLength.max;

function newAccountFields(req: FastifyRequest) {
  const body = bodyOf(req);
  const email = field(body, 'email', 'Email', EMAIL_MAX);
  const username = field(body, 'username', 'Username', USERNAME_MAX);
  const password = field(body, 'password', 'Password', PASSWORD_MAX);
  if (!email) throw badRequest('Email is required.', 'missing-field');
  if (!username) throw badRequest('Username is required.', 'missing-field');
  if (!password) throw badRequest('Password is required.', 'missing-field');
  return { email, username, password };
}

// ---------------------------------------------------------------- routes

const plugin: RoutePlugin = async (app, { services: s }) => {
  const { db } = s.database;

  // Sign in.
  /** Form posts go back to their form, keeping the `return` target. */
  const formPost = (formPath: string | ((status: number) => string), render: Parameters<typeof formPostTo>[1], handler: Parameters<typeof formPostTo>[2]) =>
    formPostTo((_req, status) => (typeof formPath === 'function' ? formPath(status) : formPath), render, handler, { returnTo: returnOf });
  const renderLogin = (req: FastifyRequest, msg?: Msg) => loginPage({ msg, returnTo: returnOf(req), username: req.actor?.username });
  app.get('/_/login', async (req, reply) => sendPage(reply, renderLogin(req, queryMsg(req))));
  app.post(
    '/_/login',
    formPost('/_/login', renderLogin, async (req, reply) => {
      await refuseCrossSite(req, s);
      const body = bodyOf(req);
      const identifier = field(body, 'email', 'Email', EMAIL_MAX) ?? field(body, 'username', 'Username', USERNAME_MAX);
      const password = field(body, 'password', 'Password', PASSWORD_MAX);
      if (!identifier) throw badRequest('Enter your email or username.', 'missing-field');
      if (!password) throw badRequest('Enter your password.', 'missing-field');

      const who = await passwordLogin(s, req.ip, identifier, password);
      await signIn(req, reply, s, who.accountId);
      if (wantsHtml(req)) return reply.redirect(returnOf(req) ?? afterSignIn(req, s), 302);
      return done(req, reply, `Signed in as ${who.username}.`, { extra: { username: who.username } });
    }),
  );

  // Sign up: a free developer account.
  const renderSignup = (req: FastifyRequest, msg?: Msg) => signupPage({ msg, returnTo: returnOf(req), username: req.actor?.username });
  app.get('/_/signup', async (req, reply) => {
    if (req.site.kind === 'main' && !(await isSetUp(s))) return reply.redirect('/_/setup', 302);
    return sendPage(reply, renderSignup(req, queryMsg(req)));
  });
  app.post(
    '/_/signup',
    formPost('/_/signup', renderSignup, async (req, reply) => {
      await refuseCrossSite(req, s);
      await strictAttempt(s, req, reply, 'signup');
      const input = newAccountFields(req);
      const person = await createPerson(s, { ...input, plan: 'free', accountType: 'dev' });
      await signIn(req, reply, s, person.id);
      if (wantsHtml(req)) return reply.redirect(returnOf(req) ?? afterSignIn(req, s), 302);
      return done(req, reply, `Welcome, ${person.username}.`, { status: 201, extra: { username: person.username } });
    }),
  );

  // Sign out: GET asks, POST revokes the session and clears every auth and ownership cookie.
  app.get('/_/logout', async (req, reply) => sendPage(reply, logoutPage({ msg: queryMsg(req), username: req.actor?.username })));
  app.post(
    '/_/logout',
    formPost('/_/logout', (req, msg) => logoutPage({ msg, username: req.actor?.username }), async (req, reply) => {
      await refuseCrossSite(req, s);
      const token = req.cookies[AUTH_COOKIE];
      if (token && token.length < 200) await revokeSession(db, token, s.clock.now());
      clearSessionCookies(req, reply, s.config);
      return done(req, reply, 'You are signed out.', { redirect: '/_/login' });
    }),
  );

  // First-run setup: the first account becomes the superadmin. Main app only, only while no account exists.
  app.get('/_/setup', async (req, reply) => {
    if (req.site.kind !== 'main') throw notFound();
    authorize({ actor: req.actor }, null, 'setup');
    if (await isSetUp(s)) {
      if (wantsHtml(req)) return reply.redirect(withMessage('/_/login', SETUP_DONE_MSG, 'error'), 302);
      throw notFound(SETUP_DONE_MSG);
    }
    return sendPage(reply, setupPage({ msg: queryMsg(req) }));
  });
  app.post(
    '/_/setup',
    formPost(
      (status) => (status === 409 ? '/_/login' : '/_/setup'),
      (_req, msg) => setupPage({ msg }),
      async (req, reply) => {
        if (req.site.kind !== 'main') throw notFound();
        authorize({ actor: req.actor }, null, 'setup');
        await refuseCrossSite(req, s);
        const input = newAccountFields(req);
        const person = await createFirstSuperadmin(s, input);
        setUpInstances.add(s);
        await signIn(req, reply, s, person.id);
        if (wantsHtml(req)) return reply.redirect('/_/dashboard', 302);
        return done(req, reply, `Kiln is set up. Welcome, ${person.username}.`, { status: 201, extra: { username: person.username } });
      },
    ),
  );
};

export default plugin;
