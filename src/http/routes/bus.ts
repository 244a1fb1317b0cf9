// The message bus of a document host (src/bus), as hyperclayjs 1.38's AI editing and Hyperclay Local speak it:
//   GET  /_/bus/subscribe?channel=<name>[&channel=…]   SSE of the host's messages on those channels
//   POST /_/bus/send   {channel, type, v, payload, sender} + Page-URL   → {delivered}
// Errors carry `error` (what the page shows) beside Kiln's `msg`/`code`.
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { badRequest } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { hostAccount, onlyOn } from '../hosts.ts';
import { channels } from '../../events/bus.ts';
import { SseStream } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { busFrame } from '../../bus/bus.ts';
import { publishLive } from '../../events/publish.ts';
import { EditsInFlight } from '../../ai-edit/in-flight.ts';
import { CHANNEL as AI_EDIT } from '../../ai-edit/handler.ts';
import { SEND_BODY, subscriptionChannels } from '../../bus/wire.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'The message bus lives on each document host.');
  // What the page shows of a refusal is `error` (hyperclayjs ai-edit.js busSend): src/http/app.ts adds it.
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), errorField: true };
  });

  const callerOf = (req: FastifyRequest) =>
    s.bus.caller(hostAccount(req), { actor: req.actor, teamRole: req.teamRole }, req.headers['x-api-key']);

  app.get('/_/bus/subscribe', async (req, reply) => {
    assertSameOrigin(req);
    const caller = await callerOf(req);
    const named = subscriptionChannels(req.query);
    if ('problem' in named) throw badRequest(named.problem, 'invalid-body');
    const accountId = hostAccount(req);
    const giveBack = s.bus.takeSlot(accountId, named.channels);
    try {
      takeStreamSlot(s, req, reply);
    } catch (err) {
      giveBack();
      throw err;
    }
    reply.hijack();
    const sse = new SseStream(reply.raw);
    sse.onClose(giveBack);
    const subscribed = new Set(named.channels);
    // A page waiting for an AI edit is told, when Kiln stops, before its stream closes (src/ai-edit/in-flight.ts).
    const edits = subscribed.has(AI_EDIT) ? new EditsInFlight() : null;
    await s.hub.attach(channels.bus(accountId), sse, {
      view: (event, id) => {
        edits?.see(event, id);
        return busFrame(event, id, subscribed);
      },
      grants: caller.grants,
      lastWords: edits ? () => edits.lastWords(s.aiEdit.sender) : undefined,
    });
  });

  app.post('/_/bus/send', { bodyLimit: limits.bus.messageBytes }, async (req) => {
    assertSameOrigin(req);
    const caller = await callerOf(req);
    const body = SEND_BODY.safeParse(req.body);
    if (!body.success) throw badRequest(body.error.issues.map((i) => i.message).join('; '), 'invalid-body');
    const accountId = hostAccount(req);
    await s.bus.count(accountId);
    // The page a message says it came from is a page of this host (subscribers see it as `origin`).
    const pageUrl = documentUrlHeader(req.headers) ?? '';
    if (pageUrl && documentPathOf(pageUrl).host !== (req.headers.host ?? '').toLowerCase())
      throw badRequest('The Page-URL names another host.', 'bad-document-url');
    const origin = pageUrl || (req.headers['x-api-key'] ? 'agent' : '');
    const delivered = s.bus.subscribers(accountId, body.data.channel);
    // Live only: refused at once (503) while Redis is away, never left waiting for it.
    const seq = await publishLive(s, () => s.bus.publish(accountId, body.data, origin));
    // The built-in AI editing answers requests made on this process (src/ai-edit).
    s.aiEdit.heard(accountId, body.data, { caller, pageUrl });
    return { delivered, seq };
  });
};

export default plugin;
