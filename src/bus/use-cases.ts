// The message bus's use cases: who is on a host's bus (THE decision, the access table's `bus` row, asked once by
// `onBus`), sending on it and subscribing to it, which run with the `BusCtx` it made. The caller is the
// request's (src/access/caller.ts): a session of the host, or a sync key (the account's own, or a person's who
// owns or edits the team); the host is the caller's.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { SseStream } from '../sse/stream.ts';
import { channels } from '../events/bus.ts';
import { grants } from '../events/revocations.ts';
import { publishLive } from '../events/publish.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import { documentPathOf } from '../save/document-url.ts';
import { EditsInFlight } from '../ai-edit/in-flight.ts';
import { CHANNEL as AI_EDIT } from '../ai-edit/handler.ts';
import { busFrame } from './bus.ts';
import type { SendBody } from './wire.ts';

/** Someone on a host's bus: the host's account, the person, and the grants a subscription stands on (it
 *  ends when any of them does: their session or key, and a team member's role). */
export interface BusMember {
  accountId: number;
  actor: Actor;
  grants: string[];
}

/** THE decision: the caller on its host's bus, or the table's refusal (401 for nobody, 403 for others, 403
 *  `viewer` for a team's viewer); a key that came and was refused answers its own 401. */
export async function busMember(ctx: Pick<Ctx, 'caller' | 'nodes'>): Promise<BusMember> {
  const { caller } = ctx;
  if (caller.refused) throw caller.refused;
  // The bus is the whole host's: a narrowed credential (an agent key: one folder, reads only) is not on it.
  if (caller.scope)
    throw forbidden('The message bus takes a session or a sync key (hcsk_…), not an agent key.', 'key-scope');
  const accountId = caller.host;
  // Only document hosts have a bus (the routes are not mounted elsewhere).
  if (accountId === null) throw notFound();
  await ctx.nodes.openHost(accountId, 'bus');
  const actor = caller.actor!;
  const role = await ctx.nodes.roleIn(accountId);
  return { accountId, actor, grants: [actor.writer, ...(role ? [grants.member(accountId, actor.accountId)] : [])] };
}

/** What sending and subscribing run with: the ctx of someone on the host's bus, and where they stand there. */
export type BusCtx<P extends keyof Ctx = keyof Ctx> = Pick<Ctx, P> & { member: BusMember };

/** The ctx for the bus's use cases, when the caller is on the host's bus (`busMember`); else its refusal. */
export async function onBus<C extends Pick<Ctx, 'caller' | 'nodes'>>(ctx: C): Promise<C & { member: BusMember }> {
  return { ...ctx, member: await busMember(ctx) };
}

/** A message sent on the host's bus: counted against the account's window (429), published to every
 *  process's subscribers of its channel, and heard by the built-in AI editing. `pageUrl` is the page it says it
 *  came from (a page of `host`, the request's host name): subscribers see it as `origin`. */
export async function sendOnBus(
  ctx: BusCtx<'caller' | 'bus' | 'events' | 'aiEdit'>,
  input: { message: SendBody; pageUrl: string; host: string },
): Promise<{ delivered: number; seq: number | null }> {
  const { accountId } = ctx.member;
  await ctx.bus.count(accountId);
  const { message, pageUrl } = input;
  if (pageUrl && documentPathOf(pageUrl).host !== input.host.toLowerCase())
    throw badRequest('The Page-URL names another host.', 'bad-document-url');
  const origin = pageUrl || (ctx.caller.via === 'key' ? 'agent' : '');
  const delivered = ctx.bus.subscribers(accountId, message.channel);
  // Live only: refused at once (503) while Redis is away, never left waiting for it.
  const seq = await publishLive(ctx, () => ctx.bus.publish(accountId, message, origin));
  // The built-in AI editing answers requests made on this process (src/ai-edit).
  ctx.aiEdit.heard(ctx.caller, { accountId, message, pageUrl });
  return { delivered, seq };
}

/** A subscription to the host's bus on these channels, as server-sent events on the stream `open` gives (the
 *  HTTP edge: it takes the address's stream slot and hands over the connection). Bounded per account (429). */
export async function subscribe(
  ctx: BusCtx<'bus' | 'hub' | 'aiEdit'>,
  input: { channels: string[]; open: () => SseStream },
): Promise<void> {
  const { member } = ctx;
  const { accountId } = member;
  const giveBack = ctx.bus.takeSlot(accountId, input.channels);
  let sse: SseStream;
  try {
    sse = input.open();
  } catch (err) {
    giveBack();
    throw err;
  }
  sse.onClose(giveBack);
  const subscribed = new Set(input.channels);
  // A page waiting for an AI edit is told, when Kiln stops, before its stream closes (src/ai-edit/in-flight.ts).
  const edits = subscribed.has(AI_EDIT) ? new EditsInFlight() : null;
  await ctx.hub.attach(channels.bus(accountId), sse, {
    view: (event, id) => {
      edits?.see(event, id);
      return busFrame(event, id, subscribed);
    },
    grants: member.grants,
    lastWords: edits ? () => edits.lastWords(ctx.aiEdit.sender) : undefined,
  });
}
