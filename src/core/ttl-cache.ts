// A small bounded cache whose entries expire: for lookups that run on every request (hosts) where a
// few seconds of staleness are harmless. Never the source of truth.
export class TtlCache<V> {
  private entries = new Map<string, { value: V; until: number }>();
  constructor(
    private ttlMs: number,
    private max: number,
    private now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
