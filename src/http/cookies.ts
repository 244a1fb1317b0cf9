// Cookie names and attributes. Sessions are per host (src/accounts/sessions.ts): every session cookie
// is host-only (no Domain attribute), so the main app's session never reaches a document host and a
// document host's session never reaches another. This departs on purpose from the spec's "cookie
// covering all subdomains": with such a cookie, any account's page could act as its signed-in visitor.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { hostnameOf } from './hosts.ts';
import { limits } from '../limits.ts';

export const ADMIN_COOKIE = 'isAdminOfCurrentResource';
export const RESOURCE_COOKIE = 'currentResource';
/** The signed-in hint: a cookie for the root domain and its subdomains that carries no authority, only
 *  a keyed digest of the account id, so the owner's own host knows to fetch a host session. */
export const HINT_COOKIE = 'kiln_signed_in';
/** Host-only, on a document host: the hint this browser already bounced for (one bounce per hint). */
export const HINT_SEEN_COOKIE = 'kiln_hint_seen';

const LEGACY_AUTH_COOKIE = 'auth_token';

/** `__Host-auth_token` wherever browsers treat the hosts as secure: over https, and on `*.localhost`
 *  (Chromium keeps Secure cookies there over plain http). A browser refuses a cookie of that name that
 *  carries a Domain, so a sibling host's script cannot toss one in. Elsewhere (plain http on another
 *  name) `auth_token`, where two of them in one request count as none. */
export function authCookieName(config: Config): string {
  const name = config.rootHostname;
  return config.secure || name === 'localhost' || name.endsWith('.localhost')
    ? '__Host-auth_token'
    : LEGACY_AUTH_COOKIE;
}

/** The request's session token: exactly one auth cookie, of sane length. Several (a sibling host
 *  tossed one in beside the real one) count as none: signed out. */
export function sessionTokenOf(req: FastifyRequest, config: Config): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  const name = authCookieName(config);
  let found: string | null = null;
  let count = 0;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    count++;
    found = part.slice(eq + 1).trim();
  }
  return count === 1 && found && found.length < 200 ? found : null;
}

function secureOn(req: FastifyRequest, config: Config): boolean {
  // A custom domain is always served over TLS in production.
  return config.secure || req.site?.kind === 'domain';
}

/** Sets this host's session cookie: host-only, httpOnly, SameSite=Lax. */
export function setSessionCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  config: Config,
  token: string,
  expiresAt: Date,
  now: Date,
) {
  // A cookie left by a version of Kiln that set it for the whole root domain would make two.
  clearLegacyDomainCookie(req, reply, config);
  reply.setCookie(authCookieName(config), token, {
    path: '/',
    httpOnly: true,
    secure: secureOn(req, config) || authCookieName(config).startsWith('__Host-'),
    sameSite: 'lax',
    expires: expiresAt,
    maxAge: Math.max(0, Math.round((expiresAt.getTime() - now.getTime()) / 1000)),
  });
}

/** The signed-in hint, for the root domain and every document host under it (not custom domains). */
export function setHintCookie(reply: FastifyReply, config: Config, hint: string, expiresAt: Date) {
  reply.setCookie(HINT_COOKIE, hint, {
    path: '/',
    domain: config.rootHostname,
    httpOnly: true,
    secure: config.secure,
    sameSite: 'lax',
    expires: expiresAt,
    maxAge: Math.floor(limits.loginTokenLifetimeMs / 1000),
  });
}

export function clearHintCookie(reply: FastifyReply, config: Config) {
  reply.clearCookie(HINT_COOKIE, { path: '/', domain: config.rootHostname });
}

function clearLegacyDomainCookie(req: FastifyRequest, reply: FastifyReply, config: Config) {
  const name = hostnameOf(req);
  if (name === config.rootHostname || name.endsWith(`.${config.rootHostname}`)) {
    reply.clearCookie(LEGACY_AUTH_COOKIE, { path: '/', domain: config.rootHostname });
  }
}

/** Clears this host's auth and ownership cookies (and, on the main app, the signed-in hint). */
export function clearSessionCookies(req: FastifyRequest, reply: FastifyReply, config: Config) {
  // Share-token cookies (`share_<sitename>`) grant ownership for a visit: they go too.
  const shares = Object.keys(req.cookies ?? {})
    .filter((n) => n.startsWith('share_'))
    .slice(0, 50);
  for (const name of new Set([
    authCookieName(config),
    LEGACY_AUTH_COOKIE,
    ADMIN_COOKIE,
    RESOURCE_COOKIE,
    HINT_SEEN_COOKIE,
    ...shares,
  ])) {
    reply.clearCookie(name, { path: '/', secure: name.startsWith('__Host-') || undefined });
  }
  clearLegacyDomainCookie(req, reply, config);
  const host = hostnameOf(req);
  if (host === config.rootHostname || host.endsWith(`.${config.rootHostname}`)) clearHintCookie(reply, config);
}
