// The in-process event bus: the default when Kiln runs as one process. Ids and the replay log live in
// this process's memory, bounded per channel and in total (see `replayLog` in bus.ts).
import {
  keptInReplayLog,
  nextId,
  replayLog,
  type Envelope,
  type EventBus,
  type KilnEvent,
  type Listener,
  type Replay,
} from './bus.ts';

interface Kept extends Envelope {
  /** The channel's id before this event: kept events chain `prev` → `id` without gaps. */
  prev: number;
  bytes: number;
  at: number;
}

interface ChannelLog {
  lastId: number;
  kept: Kept[];
  bytes: number;
}

/** Channels whose last id is remembered; older ones are forgotten (ids stay growing: Date.now()-based). */
const MAX_CHANNELS = 100_000;

export class MemoryEventBus implements EventBus {
  private listeners = new Map<string, Set<Listener>>();
  /** In order of last publish, oldest first. */
  private logs = new Map<string, ChannelLog>();
  private totalBytes = 0;

  private readonly now: () => number;
  private readonly outside: () => number;
  /** `outside`: the shared database's count of other processes' changes (`outsideChanges`). */
  constructor(now: () => number = Date.now, outside: () => number = () => 0) {
    this.now = now;
    this.outside = outside;
  }

  /** Bytes of the events kept for replay, all channels together (for the metrics). */
  get heldBytes(): number {
    return this.totalBytes;
  }

  async publish(channel: string, message: KilnEvent): Promise<number> {
    const id = this.record(channel, message);
    this.deliver(channel, message, id);
    return id;
  }

  /** Calls every local listener of a channel; one listener's failure never stops the others. */
  deliver(channel: string, message: KilnEvent, id: number): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(message, id);
      } catch (err) {
        console.error('event listener failed:', err);
      }
    }
  }

  subscribe(channel: string, listener: Listener): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0 && this.listeners.get(channel) === set) this.listeners.delete(channel);
    };
  }

  /** Delivery is already at once in one process. */
  watch(channel: string, forget: (event: KilnEvent) => void): () => void {
    return this.subscribe(channel, forget);
  }

  async subscribed(): Promise<void> {}

  hasListeners(channel: string): boolean {
    return this.listeners.has(channel);
  }

  async replay(channel: string, afterId: number): Promise<Replay> {
    const log = this.logs.get(channel);
    // Ids only grow, so a channel whose newest id is below the asked one lost its log (a restart):
    // what came after the asked id is unknown.
    if (!log) return { events: [], complete: afterId === 0, lastId: 0 };
    if (log.lastId <= afterId) return { events: [], complete: log.lastId === afterId, lastId: log.lastId };
    const since = this.now() - replayLog.ttlMs;
    const fresh = log.kept.filter((k) => k.at >= since && k.id > afterId);
    // Kept events form an unbroken chain up to the newest (see `record`): the replay is complete when
    // the chain starts right after the asked id (a chain that starts elsewhere began after a reset).
    const complete = fresh.length > 0 && fresh[0].prev === afterId && fresh[fresh.length - 1].id === log.lastId;
    return { events: fresh.map(({ id, event }) => ({ id, event })), complete, lastId: log.lastId };
  }

  private record(channel: string, event: KilnEvent): number {
    let log = this.logs.get(channel);
    if (log) this.logs.delete(channel);
    else log = { lastId: 0, kept: [], bytes: 0 };
    this.logs.set(channel, log); // most recently published last
    const prev = log.lastId;
    const id = nextId(prev, this.now());
    log.lastId = id;
    const bytes = approxBytes(event);
    if (keptInReplayLog(channel, bytes)) {
      log.kept.push({ id, event, bytes, at: this.now(), prev });
      log.bytes += bytes;
      this.totalBytes += bytes;
    } else {
      // Too large to keep: the next kept event no longer follows the one before it.
      this.dropAll(log);
    }
    while (log.kept.length > replayLog.events) this.dropOldest(log);
    this.bound();
    return id;
  }

  private dropOldest(log: ChannelLog) {
    const k = log.kept.shift()!;
    log.bytes -= k.bytes;
    this.totalBytes -= k.bytes;
  }

  private dropAll(log: ChannelLog) {
    this.totalBytes -= log.bytes;
    log.bytes = 0;
    log.kept = [];
  }

  /** Keeps the whole log under its byte budget and channel count, dropping the least recently
   *  published channels' events first. */
  private bound() {
    if (this.totalBytes <= replayLog.maxTotalBytes && this.logs.size <= MAX_CHANNELS) return;
    for (const [channel, log] of this.logs) {
      if (this.totalBytes <= replayLog.maxTotalBytes && this.logs.size <= MAX_CHANNELS) break;
      this.dropAll(log);
      if (this.logs.size > MAX_CHANNELS) this.logs.delete(channel);
    }
  }

  async reachable(): Promise<boolean> {
    return true;
  }

  flowing(): boolean {
    return true;
  }

  outsideChanges(): number {
    return this.outside();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.logs.clear();
    this.totalBytes = 0;
  }
}

/** Roughly the serialized size of an event: its long strings plus a little. */
function approxBytes(e: KilnEvent): number {
  let n = 256;
  if ('html' in e) n += e.html.length;
  if ('content' in e && typeof e.content === 'string') n += e.content.length;
  if ('path' in e) n += e.path.length;
  return n;
}
