// Signing in, and carrying a login to a document host (the session model: src/accounts/sessions.ts).
//
//   main app    /_/session/start?host=<document host>&return=<path>
//                 signed in and the host is the account's own: a single-use grant, then
//                 302 <host>/_/session?grant=…&return=<path>; signed in elsewhere: 302 to the page as a
//                 visitor; not signed in: the sign-in page first (or, for an automatic bounce, straight
//                 back to the page).
//   document    /_/session?grant=…&return=<path>
//   host          redeems the grant for a host-only session cookie and 302s to the clean URL.
//
// An owner who opens their own host with no session there is bounced through the main app once per
// hint (`bounceToMainApp`): the main app sets a hint cookie for the root domain that carries only a keyed
// digest of the account id, so other accounts' hosts never bounce and never learn who is visiting.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { HostInfo } from './context.ts';
import { createGrant, createHostSession, createLogin } from '../accounts/sessions.ts';
import { randomToken } from '../clock.ts';
import { HINT_COOKIE, HINT_SEEN_COOKIE, setHintCookie, setSessionCookie } from './cookies.ts';
import { hostnameOf, lookupHost } from './hosts.ts';
import { hostOrigin } from '../core/urls.ts';
import { KilnError } from '../errors.ts';
import { contextOf } from '../context.ts';
import { anonymous, personCaller } from '../access/caller.ts';
import { actorOfPerson } from '../accounts/actors.ts';
import { personRow } from '../store/accounts.ts';

export interface Login {
  id: number;
  accountId: number;
  expiresAt: Date;
}

/** Whether the person may hold a session on a document host: the table's `session` row (its own account, a
 *  member of its team), asked through their `ctx.nodes`, as /_/session/start and the auth hook ask it. */
async function holdsSessionOn(s: Services, personId: number, host: number): Promise<boolean> {
  const row = await personRow(s.database.db, { id: personId });
  const actor = row ? actorOfPerson(row, `account:${personId}`) : null;
  const ctx = contextOf(s, actor ? personCaller('session', actor, null) : anonymous());
  return ctx.nodes.mayOnHost(host, 'session');
}

/** Starts a login for the account. On the main app it sets the main session cookie and the signed-in
 *  hint; on a document host where the account holds sessions (its own, a team's it is a member of), a session
 *  for that host. On any other host (an app's host signing in one of its app users) it sets nothing there:
 *  send the browser on with `handoff`. */
export async function signIn(req: FastifyRequest, reply: FastifyReply, s: Services, accountId: number): Promise<Login> {
  const { db } = s.database;
  const now = s.clock.now();
  const login = await createLogin(db, accountId, now, req.headers['user-agent']);
  const result = { id: login.id, accountId, expiresAt: login.expiresAt };
  if (req.site.kind === 'main') {
    setSessionCookie(req, reply, s.config, login.token, login.expiresAt, now);
    setHintCookie(reply, s.config, newHint(s, accountId), login.expiresAt);
  } else if (await holdsSessionOn(s, accountId, req.site.accountId)) {
    const session = await createHostSession(db, result, hostnameOf(req), now);
    setSessionCookie(req, reply, s.config, session.token, session.expiresAt, now);
  }
  return result;
}

/** The URL a signed-in browser should follow to reach `url`: through that host's `/_/session` with a
 *  fresh grant when `url` is on another document host where the login's account holds sessions;
 *  `url` itself otherwise (the main app, this host, or a host where the account has no session). */
export async function handoff(s: Services, req: FastifyRequest, login: Login, url: string): Promise<string> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return url;
  }
  const name = target.hostname.toLowerCase();
  if (name === s.config.rootHostname || name === hostnameOf(req)) return url;
  const site = await lookupHost(s, name).catch(() => null);
  if (!site || site.kind === 'main' || !(await holdsSessionOn(s, login.accountId, site.accountId))) return url;
  return grantUrl(s, login.id, site, target.pathname + target.search);
}

/** `<host>/_/session?grant=…&return=<path>` for a new grant of the login on that host. */
export async function grantUrl(
  s: Services,
  loginId: number,
  site: Exclude<HostInfo, { kind: 'main' }>,
  returnPath: string,
): Promise<string> {
  const host = site.kind === 'domain' ? site.domain : `${site.username}.${s.config.rootHostname}`;
  const grant = await createGrant(s.database.db, loginId, host, s.clock.now());
  return `${hostOrigin(s.config, site)}/_/session?grant=${grant}&return=${encodeURIComponent(returnPath)}`;
}

// ------------------------------------------------------------------ the signed-in hint

function hintDigest(s: Services, accountId: number): string {
  return createHmac('sha256', s.secret).update(`signed-in-hint:${accountId}`).digest('base64url').slice(0, 22);
}

/** `<digest of the account id>.<random>`: the random part changes with every login, so a new login
 *  bounces once more even where an older one already did. */
function newHint(s: Services, accountId: number): string {
  return `${hintDigest(s, accountId)}.${randomToken(9)}`;
}

function hintIsFor(s: Services, hint: string, accountId: number): boolean {
  const digest = Buffer.from(hint.split('.')[0] ?? '');
  const expected = Buffer.from(hintDigest(s, accountId));
  return digest.length === expected.length && timingSafeEqual(digest, expected);
}

/** The browser's sign-in hint names this host's account: its owner is signed in on the main app (with or
 *  without a session on this host yet). */
export function hintNamesThisHost(req: FastifyRequest, s: Services): boolean {
  if (req.site.kind !== 'account') return false;
  const hint = req.cookies[HINT_COOKIE];
  return !!hint && hint.length <= 100 && hintIsFor(s, hint, req.site.accountId);
}

/** A top-level page load in a browser (not a script's fetch, not a frame). */
function isNavigation(req: FastifyRequest): boolean {
  if (req.method !== 'GET') return false;
  const mode = req.headers['sec-fetch-mode'];
  if (mode !== undefined) return mode === 'navigate' && (req.headers['sec-fetch-dest'] ?? 'document') === 'document';
  return (req.headers.accept ?? '').includes('text/html');
}

/** On an account's host, a page load by its signed-in owner who has no session here yet goes through
 *  the main app once (per login) to fetch one; returns the redirect, or null to serve the page. */
export function bounceToMainApp(req: FastifyRequest, reply: FastifyReply, s: Services): FastifyReply | null {
  if (req.caller?.actor || req.site.kind !== 'account' || !isNavigation(req)) return null;
  const hint = req.cookies[HINT_COOKIE];
  if (!hint || hint.length > 100 || req.cookies[HINT_SEEN_COOKIE] === hint || !hintIsFor(s, hint, req.site.accountId))
    return null;
  reply.setCookie(HINT_SEEN_COOKIE, hint, { path: '/', httpOnly: true, sameSite: 'lax', secure: s.config.secure });
  const start = new URL(`${s.config.baseUrl}/_/session/start`);
  start.searchParams.set('host', hostnameOf(req));
  start.searchParams.set('return', req.url);
  start.searchParams.set('auto', '1');
  return reply.header('cache-control', 'no-store').redirect(start.toString(), 302);
}

/** The document host named by `/_/session/start?host=` (left out: undefined); 404 for names Kiln does
 *  not serve. */
export async function documentHostNamed(
  s: Services,
  name: string | undefined,
): Promise<Exclude<HostInfo, { kind: 'main' }>> {
  if (name === undefined) throw new KilnError(404, 'Not found.');
  const site = await lookupHost(s, name.toLowerCase().replace(/:\d+$/, ''));
  if (site.kind === 'main') throw new KilnError(404, 'Not found.');
  return site;
}
