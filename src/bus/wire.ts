// The message bus's wire, as hyperclayjs 1.38 (communication/ai-edit.js) and Hyperclay Local's bus speak it
// (@panphora/hyper-wire): channel names, the send body, the envelope subscribers get. Pure.
//
//   GET  /_/bus/subscribe?channel=<name>[&channel=…]   SSE: `: connected`, then unnamed frames
//        `data: {channel, type, v, payload, sender, origin, seq}` (no ids, no replay), `: ping` keep-alives
//   POST /_/bus/send {channel, type, v, payload, sender}   → 200 {delivered}; errors {error, …}
import { z } from 'zod';
import { limits } from '../limits.ts';
import type { BusEnvelope } from '../events/bus.ts';

/** A channel name: what the desktop app's bus accepts. */
export const CHANNEL_NAME = /^[a-z0-9/_-]{1,64}$/;

/** A sender id: any short string (pages make `page-xxxxxx`). */
const SENDER = z.string().max(128);

export const SEND_BODY = z.object({
  channel: z.string().regex(CHANNEL_NAME, 'channel: 1 to 64 of a-z 0-9 / _ -'),
  type: z.string().min(1, 'type: not empty').max(128),
  v: z.number().int().min(0).max(1_000_000).optional(),
  payload: z.unknown().optional(),
  sender: SENDER.optional(),
});
export type SendBody = z.infer<typeof SEND_BODY>;

/** The channels a subscription names (`channel` may repeat), or a reason they are refused. */
export function subscriptionChannels(query: unknown): { channels: string[] } | { problem: string } {
  const raw = (query as Record<string, unknown> | null)?.channel;
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
  if (list.length === 0) return { problem: 'Name at least one channel: ?channel=<name>.' };
  if (list.length > limits.bus.channels)
    return { problem: `At most ${limits.bus.channels} channels per subscription.` };
  const bad = list.find((c) => !CHANNEL_NAME.test(c));
  if (bad !== undefined)
    return { problem: `Channel names are 1 to 64 of a-z 0-9 / _ - (got ${JSON.stringify(bad.slice(0, 80))}).` };
  return { channels: [...new Set(list)] };
}

/** A subscription's query: its channels (`channel` may repeat), or the reason they are refused in words. */
export const SUBSCRIBE_QUERY = z
  .unknown()
  .transform((query) => subscriptionChannels(query))
  .refine((named) => 'channels' in named, { error: (issue) => (issue.input as { problem: string }).problem })
  .transform((named) => (named as { channels: string[] }).channels);

/** The envelope subscribers receive: what was sent, with where it came from (`origin`: the page URL or
 *  the agent) and a number that grows per message (the event's id on the host's bus channel). */
export function envelopeOf(body: SendBody, origin: string): BusEnvelope {
  return {
    channel: body.channel,
    type: body.type,
    v: body.v ?? 1,
    payload: body.payload ?? null,
    sender: body.sender ?? '',
    origin,
  };
}
