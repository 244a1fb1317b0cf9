// The message bus of a document host (src/bus), as hyperclayjs 1.38's AI editing and Hyperclay Local speak it:
//   GET  /_/bus/subscribe?channel=<name>[&channel=…]   SSE of the host's messages on those channels
//   POST /_/bus/send   {channel, type, v, payload, sender} + Page-URL   → {delivered}
// The caller is a session of the host or a sync key (`keys: true`); who may be on the bus is the use cases'
// decision (src/bus/use-cases.ts `onBus`), asked once per request. Errors carry `error` (what the page shows) beside Kiln's `msg`/`code`.
import type { RoutePlugin } from './plugin.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { onlyOn } from '../hosts.ts';
import { fields } from '../schema.ts';
import { SseStream } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { SEND_BODY, SUBSCRIBE_QUERY } from '../../bus/wire.ts';
import { onBus, sendOnBus, subscribe, type BusCtx } from '../../bus/use-cases.ts';
import { decidedOnce } from '../door.ts';
import { documentUrlHeader } from '../../save/document-url.ts';

/** Every refusal of a message's or subscription's shape is `invalid-body`, as the bus has always answered. */
const invalid = { '': 'invalid-body', channel: 'invalid-body', type: 'invalid-body', v: 'invalid-body' } as const;
const sendBody = fields(SEND_BODY, { ...invalid, payload: 'invalid-body', sender: 'invalid-body' });
const subscribeQuery = fields(SUBSCRIBE_QUERY, invalid);

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'The message bus lives on each document host.');
  // What the page shows of a refusal is `error` (hyperclayjs ai-edit.js busSend): src/http/app.ts adds it.
  // Every bus route takes a sync key (an agent: `kiln ai-edit serve`) besides the host's session.
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), errorField: true, keys: true };
  });
  // Another origin is refused, then anyone not on the bus, before their input is judged: a stranger learns
  // nothing of the bus from its refusals. Asked once: the handlers hand the member's ctx to the use cases.
  const onThisBus = decidedOnce<BusCtx>('the bus member');
  app.addHook('preValidation', async (req) => {
    assertSameOrigin(req);
    onThisBus.decide(req, await onBus(req.ctx));
  });

  app.get('/_/bus/subscribe', { schema: { querystring: subscribeQuery } }, async (req, reply) => {
    await subscribe(onThisBus.of(req), {
      channels: req.query,
      open: () => {
        takeStreamSlot(s, req, reply);
        reply.hijack();
        return new SseStream(reply.raw);
      },
    });
  });

  app.post('/_/bus/send', { bodyLimit: limits.bus.messageBytes, schema: { body: sendBody } }, async (req) =>
    sendOnBus(onThisBus.of(req), {
      message: req.body,
      pageUrl: documentUrlHeader(req.headers) ?? '',
      host: req.headers.host ?? '',
    }),
  );
};

export default plugin;
