// A small bounded cache whose entries expire: for lookups that run on every request (hosts) where a
// few seconds of staleness are harmless. Never the source of truth. Expired entries stay (until the
// bound pushes them out) so that `stale()` can answer while the source of truth is unreachable.
export class TtlCache<V> {
  private entries = new Map<string, { value: V; until: number }>();
  constructor(
    private ttlMs: number,
    private max: number,
    private now: () => number = Date.now,
  ) {}

  /** The value while it is fresh. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    return e && e.until > this.now() ? e.value : undefined;
  }

  /** The value however old (for when the source cannot be asked). */
  stale(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
