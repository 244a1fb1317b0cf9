// Cross-origin write protection. Cookies are shared by every document host under the root domain,
// so a script on bob.<root> could otherwise post into alice.<root> with alice's cookie.
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { forbidden } from '../errors.ts';
import { LOOPBACK, hostnameOf } from './hosts.ts';

/** Throws 403 unless the request comes from a page of the same origin (or from a non-browser client). */
export function assertSameOrigin(req: FastifyRequest): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
    }
    if (host.toLowerCase() !== (req.headers.host ?? '').toLowerCase()) {
      throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
    }
  }
}

/** Refuses (403) a POST whose `Origin` is neither the main app (the host of BASE_URL or ROOT_DOMAIN;
 *  loopback names when the request is on the main app) nor the request's own host. Another account's
 *  host or another custom domain runs someone else's scripts: never accepted. */
export async function refuseCrossSite(req: FastifyRequest, s: Services): Promise<void> {
  const host = originHost(req);
  if (host === undefined) return;
  if (host) {
    if (host === hostnameOf(req)) return;
    if (host === s.config.rootHostname || host === new URL(s.config.baseUrl).hostname.toLowerCase()) return;
    if (req.site.kind === 'main' && LOOPBACK.has(host)) return;
  }
  throw forbidden('Cross-site form posts are refused.', 'cross-origin');
}

/** Refuses (403) a request for the main app's API from a page of another site, or under a name that is not the
 *  main app's (DNS rebinding: a name of the attacker's that resolves to this server): the Host must be the
 *  main app's (ROOT_DOMAIN, BASE_URL, or a loopback name), and an `Origin`, when a browser sends one, too. */
export function refuseForeignSite(req: FastifyRequest, s: Services): void {
  const main = mainHostsOf(s.config);
  if (!main.has(hostnameOf(req))) throw forbidden('This address is not the main app’s.', 'cross-origin');
  const host = originHost(req);
  if (host === undefined) return;
  if (!main.has(host)) throw forbidden('Requests from other sites are refused.', 'cross-origin');
}

/** The main app's hostnames, worked out once per configuration (the MCP door asks on every call). */
const mainHosts = new WeakMap<Services['config'], ReadonlySet<string>>();
function mainHostsOf(config: Services['config']): ReadonlySet<string> {
  let main = mainHosts.get(config);
  if (!main) {
    main = new Set([config.rootHostname, new URL(config.baseUrl).hostname.toLowerCase(), ...LOOPBACK]);
    mainHosts.set(config, main);
  }
  return main;
}

/** The hostname of the request's `Origin`: undefined when none came (not a browser's cross-site request), '' for
 *  `Origin: null` (sandboxed frames, file://) and garbage, which are another site's. */
function originHost(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  try {
    return new URL(origin).hostname.toLowerCase();
  } catch {
    return '';
  }
}
