// What the MCP door (`/_/mcp`) asks before a call, whoever the credential: whether this Kiln lets agents in at
// all and for the caller's plan (the operator's switch on /_/admin, kept with the plans' other settings:
// src/billing/plan-settings.ts), and whether the credential is within its calls a minute (MCP_CALLS_PER_MINUTE,
// default limits.mcpCalls).
import type { Ctx } from '../context.ts';
import type { LimiterFactory } from '../ratelimit/limiters.ts';
import type { LimitResult, RateLimiter } from '../core/rate-limiter.ts';
import { KilnError, tooMany } from '../errors.ts';
import { limits } from '../limits.ts';

/** 403 `mcp-off` when agents are off on this Kiln, or not included in the caller's plan (administrators are
 *  let in whatever their plan, as with AI editing). A caller without a person is judged on the instance only:
 *  the door answers its 401 itself. */
export function assertMcpOn(ctx: Pick<Ctx, 'caller' | 'planSettings'>): void {
  const { mcp } = ctx.planSettings;
  if (!mcp.on)
    throw new KilnError(
      403,
      'Agents (MCP) are off on this Kiln: its operator can turn them on on the admin page.',
      'mcp-off',
    );
  const actor = ctx.caller.actor;
  if (actor && !actor.isSuperadmin && !mcp.plans[actor.plan])
    throw new KilnError(403, `Agents (MCP) are not included in the ${actor.plan} plan on this Kiln.`, 'mcp-off');
}

/** One counter per process's limiter factory (memory, or Redis shared by every process). */
const limiters = new WeakMap<LimiterFactory, RateLimiter>();

function mcpLimiter(factory: LimiterFactory, max: number): RateLimiter {
  let limiter = limiters.get(factory);
  if (!limiter) {
    limiter = factory.create('mcp-calls', max, limits.mcpCalls.windowMs);
    limiters.set(factory, limiter);
  }
  return limiter;
}

/** Counts one MCP call against the caller's credential (a sync key, an agent key or an OAuth token: its
 *  `writer`, never the person, so one runaway agent does not stop the others): the counter's numbers (for
 *  `RateLimit-*` headers), or 429 `rate-limited` with `retryAfter` past `limits.mcpCalls`. */
export async function countMcpCall(ctx: Pick<Ctx, 'caller' | 'limiters' | 'config'>): Promise<LimitResult> {
  const credential = ctx.caller.actor?.writer ?? 'nobody';
  const r = await mcpLimiter(ctx.limiters, ctx.config.mcpCallsPerMinute).hit(credential);
  if (r.allowed) return r;
  const per = Math.round(limits.mcpCalls.windowMs / 1000);
  throw tooMany(
    `Too many calls with this key: at most ${r.limit} every ${per} seconds. Try again in ${r.retryAfter} s.`,
    r.retryAfter,
  );
}

/** Why agents may not connect for this caller, in words (the account page says it instead of offering keys),
 *  or null when they may. */
export function mcpClosedFor(ctx: Pick<Ctx, 'caller' | 'planSettings'>): string | null {
  try {
    assertMcpOn(ctx);
    return null;
  } catch (err) {
    if (err instanceof KilnError) return err.message;
    throw err;
  }
}
