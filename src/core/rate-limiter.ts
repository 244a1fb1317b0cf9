// Fixed-window counters. Memory by default; a Redis implementation shares them across processes.
export interface LimitResult {
  allowed: boolean;
  /** Hits in this window so far, this one included. */
  count: number;
  remaining: number;
  /** Seconds until the window resets. */
  retryAfter: number;
  limit: number;
}

export interface RateLimiter {
  hit(key: string): Promise<LimitResult>;
  reset(key: string): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { count: number; resetAt: number }>();
  private max: number;
  private windowMs: number;
  private now: () => number;
  constructor(max: number, windowMs: number, now: () => number = Date.now) {
    this.max = max;
    this.windowMs = windowMs;
    this.now = now;
  }

  async hit(key: string): Promise<LimitResult> {
    const t = this.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= t) {
      w = { count: 0, resetAt: t + this.windowMs };
      this.windows.set(key, w);
      if (this.windows.size > 100_000) this.sweep(t);
    }
    w.count++;
    return {
      allowed: w.count <= this.max,
      count: w.count,
      remaining: Math.max(0, this.max - w.count),
      retryAfter: Math.max(1, Math.ceil((w.resetAt - t) / 1000)),
      limit: this.max,
    };
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  /** Forgets every window (an operator's reset). */
  clear(): void {
    this.windows.clear();
  }

  private sweep(t: number) {
    for (const [k, w] of this.windows) if (w.resetAt <= t) this.windows.delete(k);
  }
}
