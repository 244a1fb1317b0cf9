// Which host a request is for: the main app, an account's document host, or a custom domain.
import { channels } from '../events/bus.ts';
import { movedUsername } from '../store/accounts.ts';
import { documentHostUrl } from '../core/urls.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { HostInfo } from './context.ts';
import type { Lru } from '../core/lru.ts';
import { KilnError, notFound } from '../errors.ts';
import { isStorageUnavailable } from '../store/errors.ts';
import { accountNamed } from '../accounts/people.ts';
import { activeDomain } from '../domains/domains.ts';

/** Names that reach the main app without DNS set-up (command-line clients, the desktop sync tool). */
export const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** A browser's top-level page load (its Sec-Fetch headers say so; scripts and API clients send no such thing). */
function isNavigation(req: FastifyRequest): boolean {
  return (
    req.method === 'GET' && req.headers['sec-fetch-mode'] === 'navigate' && req.headers['sec-fetch-dest'] === 'document'
  );
}

export function hostnameOf(req: FastifyRequest): string {
  return hostnameOfHeader(req.headers.host);
}

/** The name in a Host header: lower case, the port stripped (bracketed IPv6 kept intact). */
export function hostnameOfHeader(host: string | undefined): string {
  const raw = (host ?? '').toLowerCase();
  return raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d+$/, '');
}

/** Found hosts are remembered for a few seconds in `s.hosts` (every document GET needs one); unknown
 *  hosts are never cached, so a new account or an activated domain serves at once. A change of what a
 *  host serves (suspension, a disabled app user, a rename, a deleted account, a domain gone) drops them in
 *  every process through its `host-changed` event (src/events/publish.ts publishHostChanged), at once in the
 *  process that made the change (`watch`). */
export const HOST_CACHE_MS = 5_000;

/** Drops the hosts of an account (and these names) that were found lately. */
function forgetHosts(known: Lru<HostInfo>, accountId: number, names: string[]): void {
  known.deleteWhere(
    (name, site) => (site.kind !== 'main' && site.accountId === accountId) || names.includes(String(name)),
  );
}

/** `s.hosts` is HttpServices' (src/http/services.ts, which imports this file for HOST_CACHE_MS). */
export function registerHosts(app: FastifyInstance, s: Services & { hosts: Lru<HostInfo> }) {
  const root = s.config.rootHostname;
  const known = s.hosts;
  const off = s.events.watch(channels.hosts, (e) => {
    if (e.type === 'host-changed') forgetHosts(known, e.accountId, e.names);
  });
  app.addHook('onClose', async () => off());
  app.decorateRequest('site', null as never);
  app.addHook('onRequest', async (req, reply) => {
    // Probes (load balancers, orchestrators) name the process by its address, or send no Host at all: the
    // routes made for them answer on any host, before host routing. Nothing else does.
    if (req.routeOptions.config?.anyHost) {
      req.site = { kind: 'main' };
      return;
    }
    try {
      req.site = await siteOf(req);
    } catch (err) {
      // The host of a renamed account leads to its new one for a while (src/accounts/account.ts).
      const moved = err instanceof KilnError && err.status === 404 ? await movedHost(hostnameOf(req)) : undefined;
      if (!moved) throw err;
      return reply.header('cache-control', 'no-cache').redirect(`${documentHostUrl(s.config, moved)}${req.url}`, 302);
    }
    // A browser that opened the main app at localhost or 127.0.0.1 goes to its real address: document hosts
    // and the owner's edit mode only work under ROOT_DOMAIN. API clients keep the loopback alias.
    if (req.site.kind === 'main' && isNavigation(req) && LOOPBACK.has(hostnameOf(req)) && !LOOPBACK.has(root))
      return reply.header('cache-control', 'no-store').redirect(`${s.config.baseUrl}${req.url}`, 302);
    // A suspended account's hosts answer nothing but this (within the host cache's few seconds).
    if (req.site.kind !== 'main' && req.site.suspended)
      throw new KilnError(451, 'This site is unavailable: its account is suspended.', 'unavailable');
    // The one guard of route groups: a route made for one kind of host is missing on the other.
    const only = req.routeOptions.config?.host;
    if (only && only !== (req.site.kind === 'main' ? 'main' : 'document'))
      throw notFound(req.routeOptions.config.hostMessage);
  });

  async function movedHost(name: string): Promise<string | undefined> {
    if (!name.endsWith(`.${root}`)) return undefined;
    const label = name.slice(0, -root.length - 1);
    if (label.includes('.')) return undefined;
    return movedUsername(s.database.db, label, s.clock.now().toISOString());
  }

  async function siteOf(req: FastifyRequest): Promise<HostInfo> {
    const name = hostnameOf(req);
    if (name === root || LOOPBACK.has(name)) return { kind: 'main' };
    const cached = known.get(name);
    if (cached) return cached;
    let site: HostInfo;
    try {
      site = await lookupHost(s, name);
    } catch (err) {
      // The database is away: a host seen before is still that host (its documents may be served
      // from what this process last served, src/http/routes/documents.ts).
      const last = isStorageUnavailable(err) ? known.stale(name) : undefined;
      if (!last) throw err;
      return last;
    }
    known.set(name, site);
    return site;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The kind of host the route answers on; on the other kind it is missing (404, `hostMessage`). */
    host?: 'main' | 'document';
    hostMessage?: string;
    /** Answers whatever the Host header says, or without one (health probes, metrics); the site is `main`. */
    anyHost?: boolean;
    /** Error answers also carry `error` (the message), for clients that read that field. */
    errorField?: boolean;
  }
}

/** The account a document-host route serves (its route group made sure the host is one). */
export function hostAccount(req: FastifyRequest): number {
  if (req.site.kind === 'main') throw notFound();
  return req.site.accountId;
}

/** A route group: every route the plugin registers after this call answers on `host` only (a route's
 *  own `config.host` still wins). */
export function onlyOn(app: FastifyInstance, host: 'main' | 'document', hostMessage?: string): void {
  app.addHook('onRoute', (route) => {
    route.config = { host, hostMessage, ...(route.config ?? {}) };
  });
}

/** The document host a name is: `<username>.<root>` or an active custom domain; 404 for any other name. */
export async function lookupHost(s: Services, name: string): Promise<HostInfo> {
  const suffix = `.${s.config.rootHostname}`;
  if (name.endsWith(suffix)) {
    const label = name.slice(0, -suffix.length);
    const account = label.includes('.') ? undefined : await accountNamed(s, label);
    if (!account) throw notFound('No such site.');
    return {
      kind: 'account',
      accountId: account.id,
      username: account.username,
      suspended: account.suspended_at !== null,
    };
  }
  const domain = await activeDomain(s, name);
  if (!domain) throw notFound('Unknown host.');
  return {
    kind: 'domain',
    accountId: domain.accountId,
    username: domain.username,
    domain: domain.domain,
    suspended: domain.suspendedAt !== null,
  };
}
