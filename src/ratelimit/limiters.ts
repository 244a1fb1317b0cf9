// Rate-limit counters, chosen once per process: in memory by default, in Redis when REDIS_URL is set,
// so that every Kiln process behind one load balancer counts into the same windows.
//
// Fixed windows. In Redis one Lua script does INCR and, for the first hit of a window, PEXPIRE, and
// returns the count with the time left (atomic: concurrent hits from several processes are counted
// exactly; the window is Redis's clock). If Redis cannot be reached within a second the hit is allowed
// (fail open: an outage of the counter store does not lock everyone out) and the error is logged.
import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { SoftRedis } from '../redis/soft-client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../clock.ts';
import { MemoryRateLimiter, type LimitResult, type RateLimiter } from '../core/rate-limiter.ts';
import { namespaceFor } from '../events/redis.ts';

export interface LimiterFactory {
  readonly kind: 'memory' | 'redis';
  /** A limiter of `max` hits per `windowMs` for each key; `name` keeps its keys apart from other limiters'. */
  create(name: string, max: number, windowMs: number): RateLimiter;
  /** Clears every counter of this Kiln (`kiln ratelimit reset`): Redis keys are deleted; in-memory
   *  counters live in the server process, so a file in DATA_DIR that every server watches is touched. */
  resetAll(): Promise<string>;
  close(): Promise<void>;
}

/** The file `kiln ratelimit reset` touches for servers that count in memory. */
const resetFile = (dataDir: string) => path.join(dataDir, 'ratelimit-reset');

export async function createLimiterFactory(
  config: Pick<Config, 'redisUrl' | 'databaseUrl' | 'dataDir'>,
  clock: Clock,
): Promise<LimiterFactory> {
  if (config.redisUrl) {
    // When Redis does not answer in time, requests are let through (counted as allowed).
    const client = await SoftRedis.open(config.redisUrl, 'rate-limits', REDIS_TIMEOUT_MS);
    return new RedisLimiterFactory(client, namespaceFor(config));
  }
  const now = () => clock.now().getTime();
  const made: MemoryRateLimiter[] = [];
  const file = resetFile(config.dataDir);
  let watching = false;
  const onReset = (cur: fs.Stats, prev: fs.Stats) => {
    if (cur.mtimeMs !== prev.mtimeMs) for (const l of made) l.clear();
  };
  return {
    kind: 'memory',
    create: (_name, max, windowMs) => {
      const limiter = new MemoryRateLimiter(max, windowMs, now);
      made.push(limiter);
      if (!watching) {
        watching = true;
        fs.watchFile(file, { interval: 2000, persistent: false }, onReset);
      }
      return limiter;
    },
    resetAll: async () => {
      await fs.promises.mkdir(config.dataDir, { recursive: true });
      await fs.promises.writeFile(file, `${new Date().toISOString()}\n`);
      return `Touched ${file}: a running server (in-memory counters) clears them within 2 seconds.`;
    },
    close: async () => {
      if (watching) fs.unwatchFile(file, onReset);
    },
  };
}

const HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

const REDIS_TIMEOUT_MS = 1000;

class RedisLimiterFactory implements LimiterFactory {
  readonly kind = 'redis' as const;

  private readonly client: SoftRedis;
  private readonly namespace: string;
  constructor(client: SoftRedis, namespace: string) {
    this.client = client;
    this.namespace = namespace;
  }

  create(name: string, max: number, windowMs: number): RateLimiter {
    const prefix = `${this.namespace}rl:${name}:`;
    return {
      hit: async (key: string): Promise<LimitResult> => {
        const r = (await this.client.call(this.client.redis.eval(HIT, 1, prefix + key, String(windowMs)))) as
          | [number, number]
          | undefined;
        if (!r)
          return { allowed: true, count: 1, remaining: max - 1, retryAfter: Math.ceil(windowMs / 1000), limit: max };
        const [count, ttl] = [Number(r[0]), Number(r[1])];
        return {
          allowed: count <= max,
          count,
          remaining: Math.max(0, max - count),
          retryAfter: Math.max(1, Math.ceil(ttl / 1000)),
          limit: max,
        };
      },
      reset: async (key: string) => {
        await this.client.call(this.client.redis.del(prefix + key));
      },
    };
  }

  async resetAll(): Promise<string> {
    // An operator's command, not a request: wait for the connection (up to 5 s) instead of failing open.
    const r = this.client.redis;
    if (r.status !== 'ready')
      await Promise.race([
        once(r, 'ready'),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('Redis did not answer within 5 s.')), 5000).unref(),
        ),
      ]);
    const pattern = `${this.namespace}rl:*`;
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await this.client.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await this.client.redis.del(...keys);
    } while (cursor !== '0');
    return `Deleted ${deleted} rate-limit counter${deleted === 1 ? '' : 's'} in Redis.`;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
