// The one bounded cache: least recently used entries go first once it holds more than `maxEntries`
// entries or, with `sizeOf`, more than `maxBytes`. With `ttlMs`, `get` answers only while an entry
// is fresh; `stale` answers however old (what to serve while the source of truth is unreachable).
// Never the source of truth.
export interface LruOptions<V> {
  maxEntries: number;
  maxBytes?: number;
  sizeOf?: (value: V) => number;
  ttlMs?: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  size: number;
  until: number;
}

export class Lru<V> {
  private entries = new Map<string | number, Entry<V>>();
  private bytes = 0;
  private readonly opts: LruOptions<V>;
  constructor(opts: LruOptions<V>) {
    this.opts = opts;
  }

  /** The value while it is fresh (always, without a TTL); marks it recently used. */
  get(key: string | number): V | undefined {
    const e = this.entries.get(key);
    if (!e || e.until <= this.now()) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** The value however old. */
  stale(key: string | number): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string | number, value: V): void {
    this.delete(key);
    const size = this.opts.sizeOf?.(value) ?? 0;
    // A value larger than an eighth of the whole would push out everything else: not kept.
    if (this.opts.maxBytes !== undefined && size > this.opts.maxBytes / 8) return;
    this.entries.set(key, {
      value,
      size,
      until: this.opts.ttlMs === undefined ? Infinity : this.now() + this.opts.ttlMs,
    });
    this.bytes += size;
    // Map order is insertion order: the first entries are the least recently used.
    for (const [k, e] of this.entries) {
      if (
        this.entries.size <= this.opts.maxEntries &&
        (this.opts.maxBytes === undefined || this.bytes <= this.opts.maxBytes)
      )
        break;
      this.entries.delete(k);
      this.bytes -= e.size;
    }
  }

  delete(key: string | number): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.size;
  }

  /** Deletes every entry the predicate picks. */
  deleteWhere(pick: (key: string | number, value: V) => boolean): void {
    for (const [k, e] of this.entries) if (pick(k, e.value)) this.delete(k);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** What `sizeOf` counts of the entries kept (0 without it). */
  get heldBytes(): number {
    return this.bytes;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
