// The custom-domain API's limiter: `limits.domainCalls` (10 calls per minute) per user.
// One function makes it, so a shared (Redis-backed) limiter can replace the in-memory one in one place.
import type { Services } from '../services.ts';
import { MemoryRateLimiter, type RateLimiter } from '../core/rate-limiter.ts';
import { limits } from '../limits.ts';
import { tooMany } from '../errors.ts';

const made = new WeakMap<Services, RateLimiter>();

/** The limiter of a running Kiln (one per Services, made on first use). */
export function domainLimiterFor(s: Services): RateLimiter {
  let l = made.get(s);
  if (!l) made.set(s, (l = createDomainLimiter(s)));
  return l;
}

/** Swap point: in memory today (per process). */
export function createDomainLimiter(s: Services): RateLimiter {
  return new MemoryRateLimiter(limits.domainCalls.max, limits.domainCalls.windowMs, () => s.clock.now().getTime());
}

/** Counts one domain-management call of the account; beyond the limit 429 with Retry-After. */
export async function countDomainCall(s: Services, accountId: number): Promise<void> {
  const hit = await domainLimiterFor(s).hit(`domains:${accountId}`);
  if (!hit.allowed) {
    throw tooMany(`Too many domain changes: at most ${limits.domainCalls.max} calls a minute. Try again in ${hit.retryAfter} s.`, hit.retryAfter);
  }
}
