// The Redis event bus (REDIS_URL): several Kiln processes on one Redis deliver every event to every
// subscriber, whichever process took the write.
//
// - One publisher and one subscriber connection per process. The subscriber holds one Redis
//   subscription per channel that has local listeners (counted; dropped with the last listener), and
//   each message fans out to the local listeners.
// - Publishing is one Lua script: it assigns the channel's next id (max(now × 1000, last + 1), so ids
//   grow across processes and restarts), appends the event to the channel's replay log (a capped list
//   that expires when the channel is quiet) and PUBLISHes `<id> <json>` — atomically, so pub/sub order
//   is id order.
// - Reconnects: ioredis re-subscribes by itself; events published while this process was cut off are
//   then read back from the replay log and delivered in order, each id at most once.
// - Redis away: a publish never waits on it. Events that cannot be published now wait in an outbox
//   (bounded, in order) and go out as soon as the publisher reconnects. A publish whose answer was
//   lost may have run: its retry carries the event's uid and the script looks for it in the log
//   first, so it is published once.
// - Keys and pub/sub channels are prefixed with a namespace derived from the database, so that Kiln
//   deployments (and test runs) sharing one Redis never hear each other.
import type { Redis } from 'ioredis';
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import {
  keptInReplayLog,
  replayLog,
  type Envelope,
  type EventBus,
  type KilnEvent,
  type Listener,
  type Replay,
} from './bus.ts';

/** How long a channel's last id is remembered after its last publish (ids are Date.now()-based, so
 *  forgetting is safe). */
const ID_TTL_MS = 24 * 60 * 60_000;
/** A publish (or replay read) that Redis does not answer in this time fails instead of holding up the
 *  save that made it (the save is committed either way). */
const COMMAND_TIMEOUT_MS = 2000;
const SUBSCRIBE_TIMEOUT_MS = 5000;
/** Reconnect attempts back off to this (ms): a returning Redis is found within it. */
const MAX_RECONNECT_DELAY_MS = 1000;
/** How long closing waits for events still in the outbox (Redis back from an outage, or not yet connected):
 *  several reconnect attempts (MAX_RECONNECT_DELAY_MS apart) on a busy machine. */
const CLOSE_DRAIN_MS = 5000;
/** Events waiting for Redis: beyond these, new ones are refused (and their streams resume through a
 *  gap fill later). */
const OUTBOX_MAX_EVENTS = 10_000;
const OUTBOX_MAX_BYTES = 64 * 1024 * 1024;

// KEYS[1] id key, KEYS[2] log key. ARGV: 1 now (ms), 2 json, 3 keep (1/0), 4 max kept, 5 id ttl ms,
// 6 log ttl ms, 7 pub/sub channel, 8 the event's uid, 9 retry (1/0: the first try's answer was lost,
// so it may have run: an entry with this uid in the log is the answer). Returns the id as a decimal
// string (exact beyond 2^31). Log entries are `<id> <prev> <at ms> <uid> <json>`.
const PUBLISH_SCRIPT = `
if ARGV[9] == '1' then
  local kept = redis.call('LRANGE', KEYS[2], 0, -1)
  for i = #kept, 1, -1 do
    local _, _, id, uid = string.find(kept[i], '^(%d+) %d+ %d+ (%x+) ')
    if uid == ARGV[8] then return id end
  end
end
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local id = math.max(tonumber(ARGV[1]) * 1000, last + 1)
local ids = string.format('%.0f', id)
local prev = string.format('%.0f', last)
redis.call('SET', KEYS[1], ids, 'PX', ARGV[5])
if ARGV[3] == '1' then
  redis.call('RPUSH', KEYS[2], ids .. ' ' .. prev .. ' ' .. ARGV[1] .. ' ' .. ARGV[8] .. ' ' .. ARGV[2])
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
else
  redis.call('DEL', KEYS[2])
end
redis.call('PUBLISH', ARGV[7], ids .. ' ' .. ARGV[2])
return ids
`;

interface ChannelState {
  listeners: Set<Listener>;
  /** Settles when Redis acknowledged the SUBSCRIBE. */
  ready: Promise<void>;
  /** The last SUBSCRIBE failed: the next `subscribed()` sends another. */
  failed: boolean;
  /** Highest id delivered to the listeners: nothing at or below it is delivered again. */
  lastId: number;
  /** The id scale of the moment the subscription became active (now × 1000): catching up after a
   *  reconnect starts here when nothing was delivered yet. */
  since: number;
  /** While catching up after a reconnect, live messages wait here. */
  held: Envelope[] | null;
}

/** An event on its way to Redis. */
interface Pending {
  channel: string;
  json: string;
  keep: '1' | '0';
  uid: string;
  /** A try was sent and its answer lost: it may have run. */
  retry: boolean;
  resolve: (id: number) => void;
  reject: (err: Error) => void;
}

/** The namespace of a deployment: the database it runs on (never the credentials). */
export function namespaceFor(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  let identity = `sqlite:${config.dataDir}`;
  if (config.databaseUrl) {
    try {
      const u = new URL(config.databaseUrl);
      identity = `pg:${u.hostname}:${u.port || '5432'}${u.pathname}`;
    } catch {
      identity = `pg:${config.databaseUrl}`;
    }
  }
  return `kiln:${createHash('sha256').update(identity).digest('hex').slice(0, 12)}:`;
}

export class RedisEventBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channels = new Map<string, ChannelState>();
  /** Caches' listeners, also run at once by this process's own publishes (`watch`). */
  private readonly watchers = new Map<string, Set<(event: KilnEvent) => void>>();
  private connectedOnce = false;
  private closed = false;
  private lastErrorLog = 0;
  /** Events waiting for Redis, oldest first (see the header). */
  private outbox: Pending[] = [];
  private outboxBytes = 0;
  private flushing = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private uidPrefix = randomBytes(6).toString('hex');
  private uidCount = 0;
  /** The CLIENT SETNAME of the two connections (operators and tests find them in CLIENT LIST). */
  readonly connectionNames: { pub: string; sub: string };

  static async open(url: string, namespace: string, now: () => number = Date.now): Promise<RedisEventBus> {
    // Imported here, not at start: only a process with REDIS_URL loads ioredis.
    const { Redis } = await import('ioredis');
    return new RedisEventBus(Redis, url, namespace, now);
  }

  private readonly namespace: string;
  private readonly now: () => number;
  private constructor(Client: typeof Redis, url: string, namespace: string, now: () => number) {
    this.namespace = namespace;
    this.now = now;
    const options = {
      lazyConnect: true,
      enableAutoPipelining: true,
      retryStrategy: (n: number) => Math.min(100 * n, MAX_RECONNECT_DELAY_MS),
    };
    const tag = `${process.pid}-${randomBytes(3).toString('hex')}`;
    this.connectionNames = { pub: `kiln-pub-${tag}`, sub: `kiln-sub-${tag}` };
    // The publisher fails fast while disconnected (no offline queue, nothing resent behind our back):
    // the outbox decides what is sent again, and when.
    this.pub = new Client(url, {
      ...options,
      connectionName: this.connectionNames.pub,
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
    });
    this.sub = new Client(url, { ...options, connectionName: this.connectionNames.sub, autoResubscribe: true });
    this.pub.defineCommand('kilnPublish', { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
    this.pub.on('error', (err) => this.logError('publisher', err));
    this.pub.on('ready', () => this.flushSoon(0));
    this.sub.on('error', (err) => this.logError('subscriber', err));
    this.sub.on('message', (channel: string, message: string) => this.onMessage(channel, message));
    this.sub.on('ready', () => {
      if (this.connectedOnce) void this.catchUpAll();
      this.connectedOnce = true;
    });
    // Connect now: the publisher has no offline queue, so it must not wait for a first command.
    this.pub.connect().catch((err: Error) => this.logError('publisher', err));
  }

  publish(channel: string, message: KilnEvent): Promise<number> {
    for (const forget of this.watchers.get(channel) ?? []) runWatcher(forget, message);
    const json = JSON.stringify(message);
    return new Promise<number>((resolve, reject) => {
      const p: Pending = {
        channel,
        json,
        keep: keptInReplayLog(channel, Buffer.byteLength(json)) ? '1' : '0',
        uid: `${this.uidPrefix}${(this.uidCount++).toString(16)}`,
        retry: false,
        resolve,
        reject,
      };
      // Behind events still waiting (order), or Redis is away: wait in the outbox.
      if (this.outbox.length > 0 || this.pub.status !== 'ready') return this.enqueue(p);
      this.send(p).then(resolve, (err) => {
        this.logError('publish', err);
        p.retry = true;
        this.enqueue(p, true);
      });
    });
  }

  private send(p: Pending): Promise<number> {
    return (this.pub as unknown as KilnCommands)
      .kilnPublish(
        this.idKey(p.channel),
        this.logKey(p.channel),
        String(this.now()),
        p.json,
        p.keep,
        String(replayLog.events),
        String(ID_TTL_MS),
        String(replayLog.ttlMs),
        this.namespace + p.channel,
        p.uid,
        p.retry ? '1' : '0',
      )
      .then(Number);
  }

  /** Puts an event in the outbox (a failed send goes back to the front: it came before the waiting ones). */
  private enqueue(p: Pending, front = false) {
    const bytes = p.json.length;
    if (this.closed || this.outbox.length >= OUTBOX_MAX_EVENTS || this.outboxBytes + bytes > OUTBOX_MAX_BYTES) {
      p.reject(
        new Error(this.closed ? 'the event bus is closed' : 'Redis is unreachable and the event outbox is full'),
      );
      return;
    }
    if (front) this.outbox.unshift(p);
    else this.outbox.push(p);
    this.outboxBytes += bytes;
    this.flushSoon(this.pub.status === 'ready' ? 0 : MAX_RECONNECT_DELAY_MS);
  }

  private flushSoon(ms: number) {
    if (this.flushTimer || this.closed || this.outbox.length === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, ms);
    this.flushTimer.unref();
  }

  /** Sends the outbox in order, one event at a time; stops at the first failure and tries again later. */
  private async flush() {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.outbox.length > 0 && !this.closed && this.pub.status === 'ready') {
        const p = this.outbox[0];
        try {
          const id = await this.send(p);
          this.outbox.shift();
          this.outboxBytes -= p.json.length;
          p.resolve(id);
        } catch (err) {
          p.retry = true;
          this.logError('publish', err as Error);
          break;
        }
      }
    } finally {
      this.flushing = false;
      this.flushSoon(MAX_RECONNECT_DELAY_MS);
    }
  }

  /** Events waiting for Redis (tests, metrics). */
  get waiting(): number {
    return this.outbox.length;
  }

  watch(channel: string, forget: (event: KilnEvent) => void): () => void {
    let set = this.watchers.get(channel);
    if (!set) this.watchers.set(channel, (set = new Set()));
    set.add(forget);
    const off = this.subscribe(channel, forget);
    const mine = set;
    return () => {
      off();
      mine.delete(forget);
      if (mine.size === 0 && this.watchers.get(channel) === mine) this.watchers.delete(channel);
    };
  }

  subscribe(channel: string, listener: Listener): () => void {
    let state = this.channels.get(channel);
    if (!state) {
      state = {
        listeners: new Set(),
        ready: Promise.resolve(),
        failed: false,
        lastId: 0,
        since: this.now() * 1000,
        held: null,
      };
      this.channels.set(channel, state);
      this.subscribeNow(channel, state);
    }
    state.listeners.add(listener);
    const mine = state;
    return () => {
      mine.listeners.delete(listener);
      if (mine.listeners.size === 0 && this.channels.get(channel) === mine) {
        this.channels.delete(channel);
        if (!this.closed)
          this.sub.unsubscribe(this.namespace + channel).catch((err) => this.logError('unsubscribe', err));
      }
    };
  }

  private subscribeNow(channel: string, state: ChannelState) {
    state.failed = false;
    state.ready = this.sub.subscribe(this.namespace + channel).then(
      () => {
        state.since = this.now() * 1000;
      },
      (err) => {
        state.failed = true;
        this.logError('subscribe', err);
        throw err;
      },
    );
    state.ready.catch(() => {});
  }

  /** Rejects when Redis does not confirm within a few seconds (a stream then closes and its client
   *  retries); a failed subscription is tried again by the next caller. */
  subscribed(channel: string): Promise<void> {
    const state = this.channels.get(channel);
    if (!state) return Promise.resolve();
    // Redis away: the SUBSCRIBE waits in the subscriber's queue and, once it is back, what was published
    // meanwhile is read from the log (catchUp): a stream can open now and lose nothing.
    if (this.sub.status !== 'ready' && !state.failed) return Promise.resolve();
    if (state.failed) this.subscribeNow(channel, state);
    return withTimeout(state.ready, SUBSCRIBE_TIMEOUT_MS, 'Redis did not confirm the subscription');
  }

  async replay(channel: string, afterId: number): Promise<Replay> {
    const [[, last], [, entries]] = (await this.pub
      .multi()
      .get(this.idKey(channel))
      .lrange(this.logKey(channel), 0, -1)
      .exec()) as [[Error | null, string | null], [Error | null, string[]]];
    const lastId = last ? Number(last) : 0;
    // Ids only grow: a channel whose newest id is below the asked one lost its log (Redis restarted).
    if (lastId <= afterId) return { events: [], complete: lastId === afterId, lastId };
    const since = this.now() - replayLog.ttlMs;
    const fresh: Array<Envelope & { prev: number }> = [];
    for (const entry of entries ?? []) {
      const parsed = parseEntry(entry);
      if (parsed && parsed.id > afterId && parsed.at >= since) fresh.push(parsed);
    }
    // Complete when the kept chain starts right after the asked id (one that starts elsewhere began after a reset).
    const complete = fresh.length > 0 && fresh[0].prev === afterId && fresh[fresh.length - 1].id === lastId;
    return { events: fresh.map(({ id, event }) => ({ id, event })), complete, lastId };
  }

  flowing(): boolean {
    return !this.closed && this.pub.status === 'ready' && this.outbox.length === 0;
  }

  outsideChanges(): number {
    return 0;
  }

  async reachable(): Promise<boolean> {
    try {
      return (await this.pub.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // Events still waiting go out first, for a short while: a process that ends just after a write (or before
    // its publisher's first connection was ready) would otherwise drop events its writes promised.
    const until = Date.now() + CLOSE_DRAIN_MS;
    while (this.outbox.length > 0 && Date.now() < until && this.pub.status !== 'end') {
      if (this.pub.status === 'ready') await this.flush();
      if (this.outbox.length > 0) await new Promise((r) => setTimeout(r, 20));
    }
    this.closed = true;
    this.channels.clear();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const p of this.outbox.splice(0)) p.reject(new Error('the event bus is closed'));
    await Promise.all(
      [this.pub, this.sub].map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect())),
    );
  }

  private onMessage(channel: string, message: string) {
    if (!channel.startsWith(this.namespace)) return;
    const state = this.channels.get(channel.slice(this.namespace.length));
    if (!state) return;
    const sp = message.indexOf(' ');
    let envelope: Envelope;
    try {
      envelope = { id: Number(message.slice(0, sp)), event: JSON.parse(message.slice(sp + 1)) as KilnEvent };
    } catch (err) {
      this.logError('message', err as Error);
      return;
    }
    if (state.held) state.held.push(envelope);
    else this.deliver(state, envelope);
  }

  private deliver(state: ChannelState, { id, event }: Envelope) {
    if (id <= state.lastId) return;
    state.lastId = id;
    for (const fn of [...state.listeners]) {
      try {
        fn(event, id);
      } catch (err) {
        console.error('event listener failed:', err);
      }
    }
  }

  /** After a reconnect: delivers, per channel, what was published while this process was cut off. */
  private async catchUpAll() {
    await Promise.all([...this.channels].map(([channel, state]) => this.catchUp(channel, state)));
  }

  private async catchUp(channel: string, state: ChannelState) {
    if (state.held) return;
    state.held = [];
    try {
      // SUBSCRIBE again (a no-op when ioredis already did): the log is read only once new events
      // are sure to arrive by pub/sub, so nothing falls between the two.
      await this.sub.subscribe(this.namespace + channel);
      const after = state.lastId || state.since;
      const missed = await this.replay(channel, after);
      if (!missed.complete && missed.lastId > after)
        console.error(`event bus: some events on ${channel} were lost while Redis was unreachable`);
      for (const e of missed.events) this.deliver(state, e);
    } catch (err) {
      this.logError('catch-up', err as Error);
    } finally {
      const held = state.held ?? [];
      state.held = null;
      for (const e of held) this.deliver(state, e);
    }
  }

  private idKey(channel: string) {
    return `${this.namespace}id:${channel}`;
  }
  private logKey(channel: string) {
    return `${this.namespace}log:${channel}`;
  }

  private logError(what: string, err: Error) {
    if (this.closed) return;
    const t = Date.now();
    if (t - this.lastErrorLog < 5000) return;
    this.lastErrorLog = t;
    console.error(`event bus (Redis ${what}): ${err.message}`);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

interface KilnCommands {
  kilnPublish(...args: string[]): Promise<string>;
}

/** `<id> <prev> <at> <uid> <json>` (or, written by an earlier version, `<id> <prev> <at> <json>`) →
 *  the kept event, or null when malformed. */
function parseEntry(entry: string): (Envelope & { prev: number; at: number }) | null {
  const a = entry.indexOf(' ');
  const b = entry.indexOf(' ', a + 1);
  const c = entry.indexOf(' ', b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  const json = entry[c + 1] === '{' ? c + 1 : entry.indexOf(' ', c + 1) + 1;
  if (json === 0) return null;
  try {
    return {
      id: Number(entry.slice(0, a)),
      prev: Number(entry.slice(a + 1, b)),
      at: Number(entry.slice(b + 1, c)),
      event: JSON.parse(entry.slice(json)) as KilnEvent,
    };
  } catch {
    return null;
  }
}

function runWatcher(forget: (event: KilnEvent) => void, event: KilnEvent) {
  try {
    forget(event);
  } catch (err) {
    console.error('event watcher failed:', err);
  }
}
