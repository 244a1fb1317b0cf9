// POST /_/sync/control (and /_/team/<team>/sync/control): the control lane (src/guard/control.ts), with a sync
// key like the rest of the sync API. Body: one envelope `{type, v, payload}` (at most 16 KB); 200
// `{ok, applied}` for every well-formed one, known or not; 400 invalid-body for anything else; 60 a minute
// per key (429 rate-limited). In that order: the key (src/http/sync-door.ts), the rate limit (`preValidation`,
// so a malformed envelope counts too), the envelope (the schema), then the lane.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { parseEnvelope, receiveControl, type Envelope } from '../../guard/control.ts';
import { tooMany } from '../../errors.ts';
import { onlyOn } from '../hosts.ts';
import { setRateLimitHeaders } from '../../ratelimit/http.ts';
import { syncCtx, syncDoor } from '../sync-door.ts';
import { syncKeyIdOf } from '../../sync/scope.ts';
import { fields } from '../schema.ts';
import { z } from 'zod';

const PER_MINUTE = 60;

/** One envelope as devices send it (parseEnvelope's rules); anything else is `invalid-body`. */
const envelope = fields(
  z
    .unknown()
    .transform(parseEnvelope)
    .pipe(z.custom<Envelope>((e) => e !== null)),
  {
    '': { code: 'invalid-body', msg: 'Send one envelope: {type, v, payload}.' },
  },
);

const plugin: RoutePlugin = async (app, { services: s }) => {
  syncDoor(app, { syncKeysOnly: true });
  onlyOn(app, 'main', 'The sync API is on the main address of this Kiln.');
  const limiter = s.limiters.create('control', PER_MINUTE, 60_000);

  const perKey = async (req: FastifyRequest, reply: FastifyReply) => {
    const hit = await limiter.hit(String(syncKeyIdOf(syncCtx(req).sync)));
    setRateLimitHeaders(reply, hit, 60_000);
    if (!hit.allowed) throw tooMany(`At most ${PER_MINUTE} control messages a minute.`, hit.retryAfter);
  };
  const opts = { bodyLimit: 16 * 1024, preValidation: perKey, schema: { body: envelope } };
  for (const url of ['/_/sync/control', '/_/team/:team/sync/control'])
    app.post(url, opts, async (req) => {
      const ctx = syncCtx(req);
      const { applied } = await receiveControl(ctx, ctx.sync, syncKeyIdOf(ctx.sync), req.body);
      return { ok: true, applied };
    });
};

export default plugin;
