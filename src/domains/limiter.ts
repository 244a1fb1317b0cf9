// The custom-domain API's limiter: `limits.domainCalls` (10 calls per minute) per user, counted by the
// limiter factory (in memory, or in Redis when REDIS_URL is set: one count across processes).
import type { FastifyReply } from 'fastify';
import type { Services } from '../services.ts';
import { limits } from '../limits.ts';
import { tooMany } from '../errors.ts';
import { setRateLimitHeaders } from '../ratelimit/http.ts';

/** Counts one domain-management call of the account (RateLimit-* headers on the answer); beyond the
 *  limit 429 with Retry-After. */
export async function countDomainCall(s: Services, reply: FastifyReply, accountId: number): Promise<void> {
  const hit = await s.domainLimiter.hit(String(accountId));
  setRateLimitHeaders(reply, hit, limits.domainCalls.windowMs);
  if (!hit.allowed) {
    throw tooMany(
      `Too many domain calls: at most ${limits.domainCalls.max} a minute. Try again in ${hit.retryAfter} s.`,
      hit.retryAfter,
    );
  }
}
