// The data API's result cache: answers of `/_/api/<path>` and `?data=`, keyed by what they depend on
// (the document's checksum, the rules, the engine version — see src/data/read.ts), so a key's answer never
// changes and a save makes the old key unused at once. Entries carry the time they were computed (from
// the injected clock), and an entry older than its time to live is a miss whatever the store says, so
// tests can move time and the 5-minute bound holds across processes.
//
// Three implementations, chosen once in src/server.ts:
// - MemoryDataCache: one process, LRU bounded by bytes.
// - RedisDataCache: shared by every Kiln process on one Redis (REDIS_URL), with a PX expiry as the
//   store's own bound. Fails soft: a slow or unreachable Redis is a miss, never an error.
// - TieredDataCache: a small MemoryDataCache in front of another cache (Redis), so that hot answers cost
//   no round trip; safe because a key's answer never changes.
import { SoftRedis } from '../redis/soft-client.ts';
import { limits } from '../limits.ts';

export interface CachedAnswer {
  /** HTTP status of the answer (200, or a 400/413 failure). */
  status: number;
  /** The JSON text sent. */
  body: string;
  /** The same as UTF-8 bytes, kept in memory so a hit sends without encoding again (never stored in Redis). */
  bytes?: Buffer;
  /** When it was computed, ms since the epoch (the injected clock). */
  createdAt: number;
  /** How long it may be served, ms (5 minutes; shorter for load-dependent failures). */
  ttlMs: number;
}

export interface DataCache {
  /** Bytes kept in this process (for the metrics). */
  readonly heldBytes: number;
  get(key: string, now: number): Promise<CachedAnswer | undefined>;
  set(key: string, answer: CachedAnswer): Promise<void>;
  close(): Promise<void>;
}

const fresh = (a: CachedAnswer, now: number) => now - a.createdAt < a.ttlMs;

/** Approximate bytes an entry holds (JS strings are UTF-16). */
const sizeOf = (key: string, a: CachedAnswer) => 2 * (key.length + a.body.length) + (a.bytes?.length ?? 0) + 64;

/** The answer with its UTF-8 bytes. */
export function withBytes(a: CachedAnswer): CachedAnswer {
  return a.bytes ? a : { ...a, bytes: Buffer.from(a.body) };
}

export class MemoryDataCache implements DataCache {
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  private readonly maxBytes: number;
  constructor(
    /** Total bytes kept. */
    maxBytes: number = limits.memory.dataAnswers.bytes,
  ) {
    this.maxBytes = maxBytes;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    return this.getNow(key, now);
  }

  /** Synchronous lookup (the tiered cache's front uses it without a promise per request). */
  getNow(key: string, now: number): CachedAnswer | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (!fresh(hit, now)) {
      this.drop(key, hit);
      return undefined;
    }
    // Map order is insertion order: re-inserting marks it most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.setNow(key, answer);
  }

  setNow(key: string, answer: CachedAnswer): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    const size = sizeOf(key, answer);
    if (size > this.maxBytes / 8) return;
    this.entries.set(key, answer);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, v);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(key: string, a: CachedAnswer) {
    this.entries.delete(key);
    this.bytes -= sizeOf(key, a);
  }
}

/** Longest a Redis call may take before the cache counts it as a miss (or gives up storing). */
const REDIS_TIMEOUT_MS = 250;
/** Answers larger than this are not stored in Redis (they stay in the process's front cache). */
const REDIS_MAX_ENTRY_CHARS = 1024 * 1024;

export class RedisDataCache implements DataCache {
  /** Nothing is kept in this process. */
  readonly heldBytes = 0;
  private readonly client: SoftRedis;
  private readonly namespace: string;
  private constructor(
    client: SoftRedis,
    /** Key prefix of this deployment (src/events/redis.ts namespaceFor). */
    namespace: string,
  ) {
    this.namespace = namespace;
    this.client = client;
  }

  static async open(url: string, namespace: string): Promise<RedisDataCache> {
    return new RedisDataCache(await SoftRedis.open(url, 'data-cache', REDIS_TIMEOUT_MS), namespace);
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    const raw = await this.client.call(this.client.redis.get(`${this.namespace}data:${key}`));
    if (typeof raw !== 'string') return undefined;
    const answer = decode(raw);
    return answer && fresh(answer, now) ? answer : undefined;
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    if (answer.body.length > REDIS_MAX_ENTRY_CHARS) return;
    // The store's own bound is real time; the entry's createdAt bounds it by the injected clock too.
    await this.client.call(
      this.client.redis.set(`${this.namespace}data:${key}`, encode(answer), 'PX', Math.max(1, answer.ttlMs)),
    );
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** `<createdAt> <ttlMs> <status> <body>` */
function encode(a: CachedAnswer): string {
  return `${a.createdAt} ${a.ttlMs} ${a.status} ${a.body}`;
}
function decode(raw: string): CachedAnswer | undefined {
  const a = raw.indexOf(' ');
  const b = raw.indexOf(' ', a + 1);
  const c = raw.indexOf(' ', b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  const createdAt = Number(raw.slice(0, a));
  const ttlMs = Number(raw.slice(a + 1, b));
  const status = Number(raw.slice(b + 1, c));
  if (!Number.isFinite(createdAt) || !Number.isFinite(ttlMs) || !Number.isInteger(status)) return undefined;
  return withBytes({ createdAt, ttlMs, status, body: raw.slice(c + 1) });
}

export class TieredDataCache implements DataCache {
  private readonly back: DataCache;
  private readonly front: MemoryDataCache;
  get heldBytes(): number {
    return this.front.heldBytes;
  }

  constructor(back: DataCache, front = new MemoryDataCache(limits.memory.dataAnswers.nearBytes)) {
    this.back = back;
    this.front = front;
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    const near = this.front.getNow(key, now);
    if (near) return near;
    const far = await this.back.get(key, now);
    // Keeps the original createdAt: the entry expires here when it expires everywhere.
    if (far) this.front.setNow(key, far);
    return far;
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.front.setNow(key, answer);
    await this.back.set(key, answer);
  }

  async close(): Promise<void> {
    await Promise.all([this.front.close(), this.back.close()]);
  }
}
