// Cookie names and attributes, per the spec's Browser sessions table.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { hostnameOf } from './hosts.ts';
import { limits } from '../limits.ts';

export const AUTH_COOKIE = 'auth_token';
export const ADMIN_COOKIE = 'isAdminOfCurrentResource';
export const RESOURCE_COOKIE = 'currentResource';

/** The cookie domain for this request: the root domain (covering every document host) when the
 *  request is on it or below it; a custom domain gets its own; loopback names get host-only cookies. */
export function cookieDomain(req: FastifyRequest, config: Config): string | undefined {
  const name = hostnameOf(req);
  const root = config.rootHostname;
  if (name === root || name.endsWith('.' + root)) return root;
  if (req.site?.kind === 'domain') return req.site.domain;
  return undefined;
}

export function setAuthCookie(req: FastifyRequest, reply: FastifyReply, config: Config, token: string, expiresAt: Date) {
  const onCustomDomain = req.site?.kind === 'domain';
  reply.setCookie(AUTH_COOKIE, token, {
    path: '/',
    domain: cookieDomain(req, config),
    httpOnly: true,
    // A custom domain is always served over TLS in production and needs SameSite=none.
    secure: config.secure || onCustomDomain,
    sameSite: onCustomDomain ? 'none' : 'lax',
    expires: expiresAt,
    maxAge: Math.floor(limits.loginTokenLifetimeMs / 1000),
  });
}

/** Clears auth and ownership cookies on every domain variation a browser may hold them under. */
export function clearSessionCookies(req: FastifyRequest, reply: FastifyReply, config: Config) {
  const host = hostnameOf(req);
  const domains = new Set<string | undefined>([undefined, config.rootHostname, host, cookieDomain(req, config)]);
  // Share-token cookies (`share_<sitename>`) grant ownership for a visit: they go too.
  const shares = Object.keys(req.cookies ?? {}).filter((n) => n.startsWith('share_')).slice(0, 50);
  for (const name of [AUTH_COOKIE, ADMIN_COOKIE, RESOURCE_COOKIE, ...shares]) {
    for (const domain of domains) reply.clearCookie(name, { path: '/', domain });
  }
}
