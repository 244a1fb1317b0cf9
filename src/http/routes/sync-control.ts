// POST /_/sync/control (and /_/team/<team>/sync/control): the control lane (src/guard/control.ts), with a sync
// key like the rest of the sync API. Body: one envelope `{type, v, payload}` (at most 16 KB); 200
// `{ok, applied}` for every well-formed one, known or not; 400 invalid-body for anything else; 60 a minute
// per key (429 rate-limited).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { syncScope } from '../../sync/scope.ts';
import { parseEnvelope, receiveControl } from '../../guard/control.ts';
import { KilnError, badRequest, tooMany } from '../../errors.ts';
import { onlyOn } from '../hosts.ts';
import { setRateLimitHeaders } from '../../ratelimit/http.ts';

const PER_MINUTE = 60;

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main', 'The sync API is on the main address of this Kiln.');
  const limiter = s.limiters.create('control', PER_MINUTE, 60_000);

  const control = async (req: FastifyRequest, reply: FastifyReply, team?: string) => {
    const scope = await syncScope(s, req, team);
    const key = /^key:(\d+)$/.exec(scope.actor.writer);
    if (!key) throw new KilnError(401, 'Send your sync key in the X-API-Key header.', 'missing-key');
    const hit = await limiter.hit(key[1]);
    setRateLimitHeaders(reply, hit, 60_000);
    if (!hit.allowed) throw tooMany(`At most ${PER_MINUTE} control messages a minute.`, hit.retryAfter);
    const envelope = parseEnvelope(req.body);
    if (!envelope) throw badRequest('Send one envelope: {type, v, payload}.', 'invalid-body');
    const { applied } = await receiveControl(s, scope, Number(key[1]), envelope);
    return { ok: true, applied };
  };
  const opts = { bodyLimit: 16 * 1024 };
  app.post('/_/sync/control', opts, (req, reply) => control(req, reply));
  app.post<{ Params: { team: string } }>('/_/team/:team/sync/control', opts, (req, reply) =>
    control(req, reply, req.params.team),
  );
};

export default plugin;
