// A Redis connection for things that must never hold up a request when Redis is slow or down
// (the data cache, rate-limit counters): every call either answers within its time limit or counts as
// "no answer", and connection errors are logged at most every 5 s.
import type { Redis } from 'ioredis';

export class SoftRedis {
  private closed = false;
  private lastErrorLog = 0;

  readonly redis: Redis;
  private readonly label: string;
  private readonly timeoutMs: number;
  private constructor(redis: Redis, label: string, timeoutMs: number) {
    this.redis = redis;
    this.label = label;
    this.timeoutMs = timeoutMs;
    this.redis.on('error', (err: Error) => this.logError(err));
    // Connected from the start: with no offline queue, a call made before the connection is ready fails.
    this.redis.connect().catch((err: Error) => this.logError(err));
  }

  /** `label` names the connection in Redis and the log lines. */
  static async open(url: string, label: string, timeoutMs: number): Promise<SoftRedis> {
    // Imported here, not at start: only a process with REDIS_URL loads ioredis.
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, {
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 1,
      // While Redis is away a call fails at once (the caller falls back) instead of queueing for the
      // time limit: a login or a page never waits on an absent Redis.
      enableOfflineQueue: false,
      retryStrategy: (n: number) => Math.min(100 * n, 2000),
      connectionName: `kiln-${label}-${process.pid}`,
    });
    return new SoftRedis(redis, label, timeoutMs);
  }

  /** The call's result, or undefined when it fails or takes longer than the time limit. */
  async call<T>(p: Promise<T>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.timeoutMs);
    });
    try {
      return await Promise.race([p, timeout]);
    } catch (err) {
      this.logError(err as Error);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.redis;
    if (c.status === 'ready') await c.quit().catch(() => c.disconnect());
    else c.disconnect();
  }

  private logError(err: Error) {
    if (this.closed) return;
    const t = Date.now();
    if (t - this.lastErrorLog < 5000) return;
    this.lastErrorLog = t;
    console.error(`${this.label} (Redis unavailable, going on without it): ${err.message}`);
  }
}
