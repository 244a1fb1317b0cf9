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
// - Keys and pub/sub channels are prefixed with a namespace derived from the database, so that Kiln
//   deployments (and test runs) sharing one Redis never hear each other.
import { Redis } from 'ioredis';
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { replayLog, type Envelope, type EventBus, type KilnEvent, type Listener, type Replay } from './bus.ts';

/** How long a channel's last id is remembered after its last publish (ids are Date.now()-based, so
 *  forgetting is safe). */
const ID_TTL_MS = 24 * 60 * 60_000;
/** A publish (or replay read) that Redis does not answer in this time fails instead of holding up the
 *  save that made it (the save is committed either way). */
const COMMAND_TIMEOUT_MS = 2000;
const SUBSCRIBE_TIMEOUT_MS = 5000;

// KEYS[1] id key, KEYS[2] log key. ARGV: 1 now (ms), 2 json, 3 keep (1/0), 4 max kept, 5 id ttl ms,
// 6 log ttl ms, 7 pub/sub channel. Returns the id as a decimal string (exact beyond 2^31).
const PUBLISH_SCRIPT = `
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local id = math.max(tonumber(ARGV[1]) * 1000, last + 1)
local ids = string.format('%.0f', id)
local prev = string.format('%.0f', last)
redis.call('SET', KEYS[1], ids, 'PX', ARGV[5])
if ARGV[3] == '1' then
  redis.call('RPUSH', KEYS[2], ids .. ' ' .. prev .. ' ' .. ARGV[1] .. ' ' .. ARGV[2])
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
  private connectedOnce = false;
  private closed = false;
  private lastErrorLog = 0;
  /** The CLIENT SETNAME of the two connections (operators and tests find them in CLIENT LIST). */
  readonly connectionNames: { pub: string; sub: string };

  constructor(
    url: string,
    private readonly namespace: string,
    private readonly now: () => number = Date.now,
  ) {
    const options = { lazyConnect: true, enableAutoPipelining: true, retryStrategy: (n: number) => Math.min(100 * n, 2000) };
    const tag = `${process.pid}-${randomBytes(3).toString('hex')}`;
    this.connectionNames = { pub: `kiln-pub-${tag}`, sub: `kiln-sub-${tag}` };
    this.pub = new Redis(url, { ...options, connectionName: this.connectionNames.pub, commandTimeout: COMMAND_TIMEOUT_MS });
    this.sub = new Redis(url, { ...options, connectionName: this.connectionNames.sub, autoResubscribe: true });
    this.pub.defineCommand('kilnPublish', { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
    this.pub.on('error', (err) => this.logError('publisher', err));
    this.sub.on('error', (err) => this.logError('subscriber', err));
    this.sub.on('message', (channel: string, message: string) => this.onMessage(channel, message));
    this.sub.on('ready', () => {
      if (this.connectedOnce) void this.catchUpAll();
      this.connectedOnce = true;
    });
  }

  async publish(channel: string, message: KilnEvent): Promise<number> {
    const json = JSON.stringify(message);
    const keep = Buffer.byteLength(json) <= replayLog.maxEventBytes ? '1' : '0';
    const id: string = await (this.pub as unknown as KilnCommands).kilnPublish(
      this.idKey(channel),
      this.logKey(channel),
      String(this.now()),
      json,
      keep,
      String(replayLog.events),
      String(ID_TTL_MS),
      String(replayLog.ttlMs),
      this.namespace + channel,
    );
    return Number(id);
  }

  subscribe(channel: string, listener: Listener): () => void {
    let state = this.channels.get(channel);
    if (!state) {
      state = { listeners: new Set(), ready: Promise.resolve(), failed: false, lastId: 0, since: this.now() * 1000, held: null };
      this.channels.set(channel, state);
      this.subscribeNow(channel, state);
    }
    state.listeners.add(listener);
    const mine = state;
    return () => {
      mine.listeners.delete(listener);
      if (mine.listeners.size === 0 && this.channels.get(channel) === mine) {
        this.channels.delete(channel);
        if (!this.closed) this.sub.unsubscribe(this.namespace + channel).catch((err) => this.logError('unsubscribe', err));
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
    if (state.failed) this.subscribeNow(channel, state);
    return withTimeout(state.ready, SUBSCRIBE_TIMEOUT_MS, 'Redis did not confirm the subscription');
  }

  async replay(channel: string, afterId: number): Promise<Replay> {
    const [[, last], [, entries]] = (await this.pub.multi().get(this.idKey(channel)).lrange(this.logKey(channel), 0, -1).exec()) as [
      [Error | null, string | null],
      [Error | null, string[]],
    ];
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

  async reachable(): Promise<boolean> {
    try {
      return (await this.pub.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    await Promise.all([this.pub, this.sub].map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect())));
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
      const missed = await this.replay(channel, state.lastId || state.since);
      if (!missed.complete) console.error(`event bus: some events on ${channel} were lost while Redis was unreachable`);
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

/** `<id> <prev> <at> <json>` → the kept event, or null when malformed. */
function parseEntry(entry: string): (Envelope & { prev: number; at: number }) | null {
  const a = entry.indexOf(' ');
  const b = entry.indexOf(' ', a + 1);
  const c = entry.indexOf(' ', b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  try {
    return {
      id: Number(entry.slice(0, a)),
      prev: Number(entry.slice(a + 1, b)),
      at: Number(entry.slice(b + 1, c)),
      event: JSON.parse(entry.slice(c + 1)) as KilnEvent,
    };
  } catch {
    return null;
  }
}
