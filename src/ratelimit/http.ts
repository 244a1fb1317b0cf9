// Rate limits on HTTP routes. Numbers: src/limits.ts. Counters: src/ratelimit/limiters.ts (memory or Redis).
//
// General limiter — 100 requests per 15 minutes per client address (`req.ip`; set TRUST_PROXY behind a
// reverse proxy, or every visitor shares the proxy's address). It guards the routes a stranger can use
// to probe accounts or make the server work, and none that an editor or a sync tool calls in bulk:
//   Paths are read as the router reads them (`routedPath`: `/%5f/login` and `/_/%6cogin` reach the
//   login route and count as `/_/login`).
//   - every form submission (any method but GET/HEAD/OPTIONS, any host) to the account pages: the
//     first path segment after `/_/` starts with login, signup, setup, logout, welcome, reset, forgot,
//     password, confirm or verify, and the same under `/_/app/` (a multi-tenant app's sign-up, login,
//     reset and confirm pages); `ACCOUNT_PAGE`. Viewing a page never counts;
//   - every anonymous write to `/_/…` (POST/PUT/PATCH/DELETE without a session of the host), except
//     requests with credentials that work on that host (src/http/auth.ts `hasCredentials`): a sync key
//     that may act there (the sync API is key-authenticated and a desktop client makes thousands of
//     calls), a live share token of one of its documents (share guests save and send live snapshots like
//     owners do); a key or token that only looks valid is counted. The provider webhooks
//     (`/_/webhooks/…`: signed, and sent from the provider's few addresses) are not counted either, nor the
//     OAuth token endpoint's calls (`/_/oauth/token…`: a code or refresh token each, from a connector's servers).
//   Not limited: document and upload GETs, the public data API, live/sync streams, signed-in saves,
//   uploads and dashboard work (those are bounded by plan quotas per account).
//
// Strict limiter — 5 attempts per hour per operation, each operation its own bucket (`strictAttempt`):
// first-run setup, the main app's sign-up, an app's sign-up and password reset count per client address (so visitors
// signing up to someone's app never use up the developers' sign-ups, nor the reverse); sync-key
// generation, agent-key making and share-token regeneration count per signed-in account (falling back to the address).
// `kiln ratelimit reset` clears every counter (README, Operations).
//
// Every limited answer carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) and
// `RateLimit-Policy` (`<max>;w=<seconds>`); when a route has both limiters, the strict one's numbers are
// sent. Beyond a limit: 429 `rate-limited` with `Retry-After` (JSON {msg, msgType, code, retryAfter},
// or an error page for browsers).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { LimitResult, RateLimiter } from '../core/rate-limiter.ts';
import { tooMany } from '../errors.ts';
import { limits } from '../limits.ts';
import { hasCredentials } from '../http/auth.ts';

/** Paths of the account pages (sign-in, sign-up, setup, welcome, password reset, email confirmation). */
const ACCOUNT_PAGE =
  /^\/_\/(app\/)?(login|signup|setup|logout|welcome|reset|forgot|password|confirm|verify)[a-z-]*(\/|\?|$)/;

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The path as the router sees it: the matched route's pattern (`/_/login` for `/%5f/login` or
 *  `/_/%6cogin`, which the router decodes before matching), else (no route, or the documents'
 *  catch-all) the request's path percent-decoded once, as the router decodes it. */
function routedPath(req: FastifyRequest): string {
  const pattern = req.routeOptions?.url;
  if (pattern && !pattern.includes('*')) return pattern;
  const raw = req.url;
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** True when the general limiter counts this request (see the head of this file): credentials that work
 *  on this host exempt it (a sync key or share token that merely looks like one does not). */
async function generalLimitApplies(s: Services, req: FastifyRequest): Promise<boolean> {
  const url = routedPath(req);
  if (!url.startsWith('/_/')) return false;
  if (READS.has(req.method)) return false;
  if (ACCOUNT_PAGE.test(url)) return true;
  if (url.startsWith('/_/webhooks/')) return false;
  // An agent's token calls (exchanging a code, refreshing, revoking) hold a secret that cannot be guessed, and
  // a connector's servers make them for all of its users from a few addresses.
  if (url.startsWith('/_/oauth/token')) return false;
  return !(await hasCredentials(s, req));
}

/** The `RateLimit-*` headers of one counted request. */
export function setRateLimitHeaders(reply: FastifyReply, r: LimitResult, windowMs: number): void {
  reply.header('RateLimit-Limit', String(r.limit));
  reply.header('RateLimit-Remaining', String(r.remaining));
  reply.header('RateLimit-Reset', String(r.retryAfter));
  reply.header('RateLimit-Policy', `${r.limit};w=${Math.round(windowMs / 1000)}`);
}

function inWords(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

function windowWords(ms: number): string {
  return ms % (60 * 60_000) === 0
    ? ms === 60 * 60_000
      ? 'hour'
      : `${ms / 3_600_000} hours`
    : `${Math.round(ms / 60_000)} minutes`;
}

/** Counts one hit on `limiter` for `key`, sets the headers, and throws 429 when the limit is passed. */
async function enforce(
  reply: FastifyReply,
  limiter: RateLimiter,
  key: string,
  windowMs: number,
  what: string,
): Promise<void> {
  const r = await limiter.hit(key);
  setRateLimitHeaders(reply, r, windowMs);
  if (r.allowed) return;
  throw tooMany(
    `Too many ${what}: at most ${r.limit} per ${windowWords(windowMs)}. Try again in ${inWords(r.retryAfter)}.`,
    r.retryAfter,
  );
}

/** Wires the general limiter into the app (after hosts and auth, which it reads). */
export function registerRateLimits(app: FastifyInstance, s: Services): void {
  const { windowMs } = limits.generalLimiter;
  app.addHook('onRequest', async (req, reply) => {
    if (!(await generalLimitApplies(s, req))) return;
    await enforce(reply, s.generalLimiter, `ip:${req.ip}`, windowMs, 'requests from your address');
  });
}

/** The sensitive operations the strict limiter counts, each in its own bucket. */
export type StrictOperation =
  | 'setup'
  | 'signup'
  | 'app-signup'
  | 'message'
  | 'password-reset'
  | 'sync-key'
  | 'agent-key'
  | 'share-token';

const STRICT_WORDS: Record<StrictOperation, string> = {
  setup: 'set-up attempts',
  signup: 'sign-up attempts',
  'app-signup': 'sign-up attempts',
  message: 'messages sent',
  'password-reset': 'password reset requests',
  'sync-key': 'sync keys generated',
  'agent-key': 'agent keys made',
  'share-token': 'share-token regenerations',
};

const BY_ADDRESS: ReadonlySet<StrictOperation> = new Set([
  'setup',
  'signup',
  'app-signup',
  'message',
  'password-reset',
]);

/** Counts one sensitive operation: 5 an hour (per address for signup and password reset, per
 *  signed-in account otherwise), called from inside a handler after its cheap refusals (such as a
 *  cross-site check); throws 429 `rate-limited` with `Retry-After` beyond the limit. */
export async function strictAttempt(
  s: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  operation: StrictOperation,
): Promise<void> {
  const who =
    !BY_ADDRESS.has(operation) && req.caller?.actor ? `account:${req.caller.actor.accountId}` : `ip:${req.ip}`;
  await enforce(reply, s.strictLimiter, `${operation}:${who}`, limits.strictLimiter.windowMs, STRICT_WORDS[operation]);
}
