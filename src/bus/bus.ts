// A document host's message bus (`/_/bus`): pages and agents of one host's owner talk on named channels
// (hyperclayjs's AI editing uses `ai-edit`). One bus per account, whichever of its hosts (its own, a custom
// domain) a message came in on; carried across processes on the event bus channel `bus:<account>` and kept
// nowhere. Only the host's owner may subscribe or send (a team's owners and editors), with a session of that
// host or the account's sync key (an agent on the owner's machine: `kiln ai-edit serve`); everyone else is
// refused before learning anything (the decision: src/bus/use-cases.ts). Bounded: message size (the route's body limit), sends per account per
// minute (shared by every process), open subscriptions per account per process.
import type { LimiterFactory } from '../ratelimit/limiters.ts';
import { channels, type BusMessage, type KilnEvent, type EventBus } from '../events/bus.ts';
import { limits } from '../limits.ts';
import { tooMany } from '../errors.ts';
import { Counts } from '../core/counts.ts';
import type { RateLimiter } from '../core/rate-limiter.ts';
import { envelopeOf, type SendBody } from './wire.ts';

/** What the bus uses of the services, part by part: it is one of them, so it does not import src/services.ts. */
export interface BusPorts {
  events: EventBus;
  limiters: LimiterFactory;
}

export class MessageBus {
  /** Open subscriptions in this process: per account (`<id>`) and per account and channel (`<id> <channel>`). */
  private readonly open = new Counts<string>();
  private readonly sends: RateLimiter;
  private readonly s: BusPorts;
  constructor(s: BusPorts) {
    this.s = s;
    this.sends = s.limiters.create('bus-sends', limits.bus.sends, limits.bus.windowMs);
  }

  /** Takes one of the account's subscription slots in this process for these channels (429 past the cap);
   *  the returned function gives it back. */
  takeSlot(accountId: number, names: string[]): () => void {
    if (this.open.get(String(accountId)) >= limits.bus.subscribersPerOwner)
      throw tooMany(
        `At most ${limits.bus.subscribersPerOwner} open bus subscriptions per account: close a tab or an agent.`,
        30,
      );
    return this.open.take(String(accountId), ...names.map((name) => `${accountId} ${name}`));
  }

  /** The account's open subscriptions to a channel in this process: a send's `delivered` (the desktop app's
   *  bus counts its subscribers the same way; other processes' are not counted, as /_/meta's bus block says). */
  subscribers(accountId: number, name: string): number {
    return this.open.get(`${accountId} ${name}`);
  }

  /** Counts a send against the account's window (429 past it). */
  async count(accountId: number): Promise<void> {
    const hit = await this.sends.hit(String(accountId));
    if (!hit.allowed)
      throw tooMany(
        `Too many bus messages: at most ${limits.bus.sends} a minute per account. Try again in ${hit.retryAfter} s.`,
        hit.retryAfter,
      );
  }

  /** Publishes a message to the host's subscribers of its channel, in every process; resolves with its id
   *  (the envelope's `seq`). */
  publish(accountId: number, body: SendBody, origin: string): Promise<number> {
    const envelope = envelopeOf(body, origin);
    return this.s.events.publish(channels.bus(accountId), { type: 'bus', channel: envelope.channel, envelope });
  }

  /** Listens to an account's bus in this process (the built-in AI edit handler): resolves once live. */
  async listen(accountId: number, fn: (m: BusMessage, id: number) => void): Promise<() => void> {
    const channel = channels.bus(accountId);
    const off = this.s.events.subscribe(channel, (e, id) => {
      if (e.type === 'bus') fn(e, id);
    });
    await this.s.events.subscribed(channel);
    return off;
  }
}

/** A subscriber's frame of a bus message: the envelope with its `seq`, unnamed and without an id (the wire
 *  has no replay). Made once per message, whatever the number of subscribers. */
const frames = new WeakMap<KilnEvent, Buffer>();
export function busFrame(event: KilnEvent, id: number, subscribed: Set<string>): Buffer | null {
  if (event.type !== 'bus' || !subscribed.has(event.channel)) return null;
  let frame = frames.get(event);
  if (!frame) {
    frame = Buffer.from(`data: ${JSON.stringify({ ...event.envelope, seq: id })}\n\n`);
    frames.set(event, frame);
  }
  return frame;
}
