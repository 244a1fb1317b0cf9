// Who is asking: THE caller of each request (src/access/caller.ts), resolved once, here, from whatever
// credential came. A sync key counts on the routes that take keys (`config: { keys: true }`: the sync API, its
// stream and control lane, the message bus, the MCP door), and so does an agent key (`hcak_`, in X-API-Key or as
// `Authorization: Bearer`, src/agents/keys.ts), each narrowed to its scope. An OAuth access token
// (`Authorization: Bearer`, src/oauth/token.ts: the person who connected the agent, narrowed likewise) counts on
// the resource it is bound to only, the MCP door (`config: { oauth: true }`); on the other key doors it is refused.
// A key or token that does not work is kept as the caller's `refused` for those doors to answer with. Else a
// session, looked up for the host the request arrived on only (src/accounts/sessions.ts); on a document host it must also be the host's own account's, or (a team's host) a
// member's, who acts there in their role (looked up on every request: a membership that ends ends the session's
// rights at once). A session carries no rights beyond that host. Share grants are judged per document
// (`caller.shareGrant`). `req.ctx` hands the caller to the use cases, which ask the access table through it.
// (`hasCredentials` asks whether any credential came, for the rules that need to know before a route does:
// src/http/slow-clients.ts and the general rate limiter, src/ratelimit/http.ts.)
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { Ctx } from '../context.ts';
import { contextOf } from '../context.ts';
import { anonymous, personCaller, type Caller, type ShareGrant } from '../access/caller.ts';
import { allows, hostResource } from '../access/authorize.ts';
import { KilnError, unauthorized } from '../errors.ts';
import { actorForSessionToken } from '../accounts/actors.ts';
import { sessionTokenOf } from './cookies.ts';
import { hostnameOf } from './hosts.ts';
import { isStorageUnavailable } from '../store/errors.ts';
import { actorForSyncKey } from '../sync/keys.ts';
import { isAgentKey, resolveAgentKey } from '../agents/keys.ts';
import { isLiveShareToken } from '../sharing/share.ts';
import { isShareGuest, tokenParamOf } from './share-grant.ts';
import { teamRole } from '../store/accounts.ts';
import { busMember } from '../bus/use-cases.ts';
import { MCP_PATH, oauthCaller } from '../oauth/token.ts';

/** The host a session of this request must have been minted for: null on the main app. */
function sessionHostOf(req: FastifyRequest): string | null {
  return req.site.kind === 'main' ? null : hostnameOf(req);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a sync key (`X-API-Key`, or `Authorization: Bearer`) as its caller's credential: the sync
     *  API, its stream and control lane, the message bus, the MCP door. Elsewhere a key counts for nothing. */
    keys?: boolean;
    /** The route is the protected resource OAuth access tokens are bound to (`/_/mcp`): only there does one act. */
    oauth?: boolean;
  }
  interface FastifyRequest {
    /** THE caller of this request, resolved once by the hook below. */
    caller: Caller;
    /** The use cases' ctx for this caller (made on first use). */
    readonly ctx: Ctx;
  }
}

export function registerAuth(app: FastifyInstance, s: Services) {
  app.decorateRequest('caller', null as unknown as Caller);
  const contexts = new WeakMap<FastifyRequest, Ctx>();
  app.decorateRequest('ctx', {
    getter(this: FastifyRequest) {
      let ctx = contexts.get(this);
      if (!ctx) contexts.set(this, (ctx = contextOf(s, this.caller)));
      return ctx;
    },
  });
  app.addHook('onRequest', async (req) => {
    req.caller = await callerOfRequest(s, req);
  });
}

/** The one caller of a request: a sync key on a door that takes keys, else a session of this host, else
 *  nobody; with the share grants the request holds (document hosts). On a document host a session counts only
 *  when it is the host's own account's or a member's of the host's team (who acts in their role there). */
async function callerOfRequest(s: Services, req: FastifyRequest): Promise<Caller> {
  const site = req.site;
  const host = site.kind === 'main' ? null : site.accountId;
  const grant: ShareGrant = host === null ? () => false : (node) => isShareGuest(req, node);
  let refused: KilnError | null = null;
  try {
    const key = req.routeOptions.config?.keys ? keyOf(req) : undefined;
    if (key !== undefined) {
      try {
        return await keyCaller(s, key, host, grant);
      } catch (err) {
        if (!(err instanceof KilnError)) throw err;
        refused = err;
      }
    }
    if (req.routeOptions.config?.keys && !refused) {
      const oauth = await oauthBearerCaller(s, req, host, grant);
      if (oauth instanceof KilnError) refused = oauth;
      else if (oauth) return oauth;
    }
    const token = sessionTokenOf(req, s.config);
    const actor = token ? await actorForSessionToken(s.database.db, token, sessionHostOf(req), s.clock.now()) : null;
    if (actor) {
      if (host === null) return { ...personCaller('session', actor, host, grant), refused };
      // On a document host, the table's `session` row: its own account, and its team's members (in their role).
      const role = host === actor.accountId ? null : ((await teamRole(s.database.db, host, actor.accountId)) ?? null);
      if (allows({ actor, teamRole: role }, hostResource(host), 'session')) {
        const caller = personCaller('session', actor, host, grant);
        if (role) caller.roles.set(host, role);
        return { ...caller, refused };
      }
    }
  } catch (err) {
    // The database is away: reading a page on a document host goes on as a visitor would (public
    // documents this process served lately still answer); anything else answers 503.
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (!(isStorageUnavailable(err) && read && site.kind !== 'main')) throw err;
  }
  return { ...anonymous(host, grant), refused };
}

/** The key a request carries: `X-API-Key`, or a sync or agent key as `Authorization: Bearer <key>` (how MCP
 *  clients send one). */
export function keyOf(req: FastifyRequest): string | string[] | undefined {
  const header = req.headers['x-api-key'];
  if (header !== undefined) return header;
  return /^Bearer\s+(hc[sa]k_\S*)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

/** The holder of a sync key (refused: the key's 401), with their role on the document host when it is a team's;
 *  or an agent key's (`agentKeyCaller`). */
async function keyCaller(s: Services, key: string | string[] | undefined, host: number | null, grant?: ShareGrant) {
  const first = Array.isArray(key) ? key[0] : key;
  if (first && isAgentKey(first)) return agentKeyCaller(s, first, host, grant);
  const actor = await actorForSyncKey(s, key);
  const caller = personCaller('key', actor, host, grant);
  if (host !== null && host !== actor.accountId)
    caller.roles.set(host, (await teamRole(s.database.db, host, actor.accountId)) ?? null);
  return caller;
}

/** The person behind an agent key, narrowed to the key's scope (src/agents/keys.ts; refused: its 401, or 403 for
 *  a suspended account): a team's key carries its person's role in that team, looked up for this request. */
async function agentKeyCaller(s: Services, key: string, host: number | null, grant?: ShareGrant) {
  const { actor, scope, team } = await resolveAgentKey(s, key);
  const caller = personCaller('key', actor, host, grant, scope);
  if (team) caller.roles.set(team.id, team.role);
  return caller;
}

/** An OAuth access token sent as `Authorization: Bearer <token>`, or null (none, or a Kiln key: `hcsk_`, `hcak_`). */
function oauthBearerOf(req: FastifyRequest): string | null {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  return m && !/^hc[sa]k_/.test(m[1]) ? m[1] : null;
}

/** The caller of an OAuth access token on the door it is bound to (src/oauth/token.ts), its refusal, or null when
 *  none came. On another door that takes keys a token is refused unread: it acts on its resource only (RFC 8707),
 *  the MCP door, never on the sync API or the bus, whatever its person may do there. */
async function oauthBearerCaller(
  s: Services,
  req: FastifyRequest,
  host: number | null,
  grant: ShareGrant,
): Promise<Caller | KilnError | null> {
  const token = oauthBearerOf(req);
  if (!token) return null;
  if (!req.routeOptions.config?.oauth)
    return unauthorized(
      `OAuth access tokens act only on ${MCP_PATH}, the resource they are bound to. This door takes a sync key.`,
      'invalid-oauth-token',
    );
  try {
    return await oauthCaller(s, token, host, grant);
  } catch (err) {
    if (err instanceof KilnError) return err;
    throw err;
  }
}

/** True when the request carries credentials: a session of this host (the hook above), a sync or agent key that
 *  acts on this host or an OAuth token on its door (`keyActsHere`, `oauthActsHere`), or a valid share token of a
 *  document of this host (its `share_*` cookie or `?token=`). */
export async function hasCredentials(s: Services, req: FastifyRequest): Promise<boolean> {
  // A key's person is the caller on a key door wherever the key is valid; it counts only where it acts.
  if (req.caller?.actor && req.caller.via === 'session') return true;
  // On the main app a key door resolved a working key (sync or agent, whatever header it came in).
  if (req.caller?.actor && req.caller.via === 'key' && req.site?.kind === 'main') return true;
  if (keyOf(req) !== undefined && (await keyActsHere(s, req))) return true;
  if (oauthActsHere(req)) return true;
  if (req.site?.kind !== 'account' && req.site?.kind !== 'domain') return false;
  const tokens = Object.entries(req.cookies ?? {})
    .filter(([name]) => name.startsWith('share_'))
    .map(([, value]) => value);
  const param = tokenParamOf(req);
  if (param) tokens.push(param);
  for (const token of tokens.slice(0, 8))
    if (token && (await isLiveShareToken(s, token, req.site.accountId))) return true;
  return false;
}

/** True when the hook resolved an OAuth token into the caller: on its door only (the MCP door, main app). */
function oauthActsHere(req: FastifyRequest): boolean {
  const caller = req.caller;
  return !!caller?.actor && caller.via === 'key' && !!oauthBearerOf(req) && /^oauth:/.test(caller.actor.writer);
}

/** True when the request's sync key may act on its host, as the doors that take keys decide it: on the main
 *  app any valid key (the sync API acts for its owner), on a document host the message bus's decision (the
 *  host's own account, or a team where the key's person is an owner or editor). A valid key of anyone else
 *  counts for nothing there. */
async function keyActsHere(s: Services, req: FastifyRequest): Promise<boolean> {
  const key = keyOf(req);
  try {
    // On a key door the hook already resolved the key into the caller: judge that one, not the key again.
    const resolved = req.caller?.via === 'key' ? req.caller : null;
    if (req.site?.kind === 'main') {
      if (!resolved) await actorForSyncKey(s, key);
    } else if (req.site?.kind === 'account' || req.site?.kind === 'domain')
      await busMember(contextOf(s, resolved ?? (await keyCaller(s, key, req.site.accountId))));
    else return false;
    return true;
  } catch {
    // not a key that works here
    return false;
  }
}
