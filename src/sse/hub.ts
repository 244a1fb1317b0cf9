// The streams of one process, grouped by channel. One bus subscription per channel fans out to every
// local stream of it; each event is turned into a frame once per view (sync stream, live lane, saved
// lane) and the same bytes go to every stream with that view, on the turn of the event loop after the
// event arrived (the write that made it answers first). Keep-alives run on a wheel: one timer
// for all streams, each stream pinged once per period, spread over the period.
//
// Streams also end when a right they were opened on ends: `attach(…, {grants})` registers the grants a
// stream depends on, and the hub — subscribed once to the `revocations` channel — closes every stream
// of a grant named by a `grant-revoked` event, from whichever process published it
// (src/events/revocations.ts). Routes re-check their grant after `attach` resolves, so a revocation
// committed between their check and the subscription is not missed.
import { channels, type EventBus, type KilnEvent, type Replay } from '../events/bus.ts';
import { limits } from '../limits.ts';
import type { SseStream } from './stream.ts';

/** Turns an event into this view's frame, or null when the view does not show it. */
export type View = (event: KilnEvent, id: number) => Buffer | null;

export interface AttachOptions {
  view: View;
  /** The client's Last-Event-ID: events after it are replayed first. */
  lastEventId?: number | null;
  /** Extra answer headers. */
  headers?: Record<string, string>;
  /** Frames written once the stream is live, before anything replayed (e.g. `sync-ready`). */
  preamble?: Buffer[];
  /** A frame looked up once the subscription is live (live frames wait meanwhile) and written after the
   *  preamble: what the client missed before it opened the stream (a lane opened `since` a served page). A
   *  change committed around then comes in it, live, or both; never in neither. */
  catchUp?: () => Promise<Buffer | null>;
  /** When the replay log no longer covers what the client missed: one frame that brings it up to
   *  date (the saved lane sends the stored document), given the channel's newest id. */
  onGap?: (lastId: number) => Promise<{ id: number; frame: Buffer } | null>;
  /** Ends the stream when a live event says so (e.g. a share guest's stream on `share-revoked`). */
  closeOn?: (event: KilnEvent) => boolean;
  /** The grants the stream was opened on (`key:<id>`, `session:<id>`, `member:<team>:<person>`):
   *  it ends when any of them is revoked, in any process. */
  grants?: string[];
  /** Frames the stream gets when the process stops, before it is closed (a bus stream's AI edits still open). */
  lastWords?: () => Buffer[];
}

interface Member {
  stream: SseStream;
  view: View;
  closeOn?: (event: KilnEvent) => boolean;
  lastWords?: () => Buffer[];
}

interface Channel {
  members: Set<Member>;
  off: () => void;
}

const WHEEL_SLOTS = 30;
const RECONNECT_SOON = Buffer.from('retry: 1000\n\n');
/** How long a resumed stream holds live frames while it reads the replay log a second time. */
const SETTLE_MS = 50;

export class StreamHub {
  private channels = new Map<string, Channel>();
  private wheel: Array<Set<SseStream>> = Array.from({ length: WHEEL_SLOTS }, () => new Set());
  private slot = 0;
  private timer: NodeJS.Timeout | null = null;
  private closing = false;
  private replays = new Map<string, Promise<Replay>>();
  /** Open streams by the grants they depend on. */
  private byGrant = new Map<string, Set<SseStream>>();
  /** The subscription to the revocations channel: made on the first stream with grants, kept. */
  private revocationsOff: (() => void) | null = null;

  /** Events that arrived this turn, written out on the next (see `enqueue`). */
  private queue: Array<{ members: Member[]; event: KilnEvent; id: number }> = [];

  /** Told each event's id as it arrives (ids are publication times in µs: the metrics' bus lag). */
  onEvent?: (id: number) => void;

  private readonly bus: EventBus;
  readonly keepAliveMs: number;
  constructor(bus: EventBus, keepAliveMs: number = limits.liveKeepAliveMs) {
    this.bus = bus;
    this.keepAliveMs = keepAliveMs;
  }

  /** Subscribes the stream to a channel: waits until the subscription is live, sends the headers and
   *  `: connected` (so a client that sees it is sure to get every later event), the preamble, the catch-up
   *  frame, the replay after Last-Event-ID, then live events. */
  async attach(channel: string, stream: SseStream, opts: AttachOptions): Promise<void> {
    if (this.closing) {
      stream.close();
      return;
    }
    const member: Member = { stream, view: opts.view, closeOn: opts.closeOn, lastWords: opts.lastWords };
    const grants = [...new Set(opts.grants ?? [])];
    this.join(channel, member);
    for (const g of grants) this.holdGrant(g, stream);
    stream.onClose(() => {
      this.leave(channel, member);
      for (const g of grants) this.dropGrant(g, stream);
      for (const slot of this.wheel) slot.delete(stream);
    });
    try {
      await Promise.all([
        this.bus.subscribed(channel),
        grants.length > 0 ? this.bus.subscribed(channels.revocations) : null,
      ]);
    } catch {
      stream.close();
      return;
    }
    if (stream.closed) return;
    stream.open(opts.headers);
    for (const frame of opts.preamble ?? []) stream.write(frame);
    if (opts.catchUp) {
      const frame = await opts.catchUp().catch((err) => {
        console.error(`catching up on ${channel} failed:`, (err as Error).message);
        return null;
      });
      if (frame) stream.write(frame);
    }
    if (opts.lastEventId) await this.replay(channel, stream, opts);
    stream.release();
    if (!stream.closed) this.keepAlive(stream);
  }

  private async replay(channel: string, stream: SseStream, opts: AttachOptions) {
    const after = opts.lastEventId!;
    try {
      const missed = await this.replayOnce(channel, after);
      // An id from the future (not one this channel gave out) would silence the stream: ignore it.
      if (after > Math.max(missed.lastId, Date.now() * 1000)) return;
      stream.cursor = after;
      for (const { id, event } of missed.events) {
        const frame = opts.view(event, id);
        if (frame) stream.sendNow(id, frame);
      }
      // Read the log once more a moment later, live frames still held: an event published around the
      // first read (seen to be missed by both the read and the new subscription, under load behind a
      // load balancer) is in this one. Frames already written are skipped by the cursor.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      for (const { id, event } of (await this.bus.replay(channel, after)).events) {
        const frame = opts.view(event, id);
        if (frame) stream.sendNow(id, frame);
      }
      if (!missed.complete && opts.onGap) {
        // The fill's id is above the client's own (streams send only ids past their cursor), so its next
        // resume starts after it.
        const fill = await opts.onGap(Math.max(missed.lastId, after + 1));
        if (fill) stream.sendNow(fill.id, fill.frame);
      }
    } catch (err) {
      // A stream closed meanwhile (the process stopping: its bus and database go) has nothing to catch up.
      if (stream.closed) return;
      // The log cannot be read (Redis away): bring the client up to date from storage instead.
      console.error(`replaying ${channel} failed:`, (err as Error).message);
      stream.cursor = after;
      const fill = await opts.onGap?.(after + 1).catch(() => null);
      if (fill) stream.sendNow(fill.id, fill.frame);
    }
  }

  /** Concurrent replays of the same channel from the same id (a reconnect storm after a restart:
   *  every client resumes from the same last event) share one read. */
  private replayOnce(channel: string, after: number): Promise<Replay> {
    const key = `${after} ${channel}`;
    let p = this.replays.get(key);
    if (!p) {
      p = this.bus.replay(channel, after).finally(() => this.replays.delete(key));
      this.replays.set(key, p);
    }
    return p;
  }

  private join(channel: string, member: Member) {
    let ch = this.channels.get(channel);
    if (!ch) {
      const members = new Set<Member>();
      const created: Channel = { members, off: () => {} };
      created.off = this.bus.subscribe(channel, (event, id) => {
        this.onEvent?.(id);
        this.enqueue(created, event, id);
      });
      this.channels.set(channel, (ch = created));
    }
    ch.members.add(member);
  }

  private leave(channel: string, member: Member) {
    const ch = this.channels.get(channel);
    if (!ch?.members.delete(member)) return;
    if (ch.members.size === 0) {
      this.channels.delete(channel);
      ch.off();
    }
  }

  private holdGrant(grant: string, stream: SseStream) {
    if (!this.revocationsOff)
      this.revocationsOff = this.bus.subscribe(channels.revocations, (event) => this.revoked(event));
    let set = this.byGrant.get(grant);
    if (!set) this.byGrant.set(grant, (set = new Set()));
    set.add(stream);
  }

  private dropGrant(grant: string, stream: SseStream) {
    const set = this.byGrant.get(grant);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.byGrant.delete(grant);
  }

  /** A `grant-revoked` event (from any process): closes the streams of every grant it names. */
  private revoked(event: KilnEvent) {
    if (event.type !== 'grant-revoked' || !Array.isArray(event.grants)) return;
    this.revoke(event.grants);
  }

  /** Closes this process's streams of these grants (at once, whatever the bus is doing). */
  revoke(grants: string[]) {
    for (const g of grants) {
      const set = this.byGrant.get(String(g));
      if (set) for (const stream of [...set]) stream.close();
    }
  }

  /** Events wait for the next turn of the event loop, in order, each with the streams its channel had
   *  when it arrived: the write that published it answers first (its answer does not wait for thousands
   *  of streams), then every event of the turn is written out in one pass. */
  private enqueue(ch: Channel, event: KilnEvent, id: number) {
    this.queue.push({ members: [...ch.members], event, id });
    if (this.queue.length === 1) setImmediate(() => this.flush());
  }

  private flush() {
    const queued = this.queue;
    this.queue = [];
    for (const q of queued) this.deliver(q.members, q.event, q.id);
  }

  private deliver(members: Member[], event: KilnEvent, id: number) {
    const frames = new Map<View, Buffer | null>();
    for (const m of members) {
      if (m.closeOn?.(event)) {
        m.stream.close();
        continue;
      }
      let frame = frames.get(m.view);
      if (frame === undefined) {
        frame = m.view(event, id);
        frames.set(m.view, frame);
      }
      if (frame) m.stream.send(id, frame);
    }
  }

  /** Puts the stream on the keep-alive wheel, in the slot that comes round one period from now. */
  private keepAlive(stream: SseStream) {
    this.wheel[(this.slot + WHEEL_SLOTS - 1) % WHEEL_SLOTS].add(stream);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.keepAliveMs / WHEEL_SLOTS);
      this.timer.unref();
    }
  }

  private tick() {
    const due = this.wheel[this.slot];
    this.slot = (this.slot + 1) % WHEEL_SLOTS;
    for (const stream of due) stream.write(stream.ping);
  }

  /** Sends every open stream its keep-alive now (tests; the wheel does it once per period). */
  pingAll() {
    for (const slot of this.wheel) for (const stream of slot) stream.write(stream.ping);
  }

  stats(): { channels: number; streams: number; grants: number } {
    let streams = 0;
    for (const ch of this.channels.values()) streams += ch.members.size;
    return { channels: this.channels.size, streams, grants: this.byGrant.size };
  }

  /** Ends every stream (server shutdown: open streams would keep the HTTP server from closing), each
   *  given the events that already arrived and its last words, then told to come back in a second (`retry:`),
   *  to another process or to this one restarted. */
  closeAll() {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
    for (const ch of [...this.channels.values()])
      for (const m of [...ch.members]) {
        for (const frame of m.lastWords?.() ?? []) m.stream.write(frame);
        m.stream.write(RECONNECT_SOON);
        m.stream.close();
      }
    this.revocationsOff?.();
    this.revocationsOff = null;
  }
}
