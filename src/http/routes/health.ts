// Health of the process, for load balancers and orchestrators, on any Host (an IP:port, an unknown name, none):
//   GET /_/health   200 {status:'ok'} while the process runs and answers (liveness)
//   GET /_/ready    200 when the database, the blob store (and Redis, when configured) answer; else 503 naming what is
//                   unreachable, with Retry-After: take this process out of rotation until it recovers.
import type { RoutePlugin } from './plugin.ts';
import { readiness } from '../../metrics/readiness.ts';
import { limits } from '../../limits.ts';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { notFound } from '../../errors.ts';

/** The metrics are for the operator: a bearer token (METRICS_TOKEN), or else a request from this
 *  machine that no proxy forwarded. */
function mayReadMetrics(req: FastifyRequest, token: string | undefined): boolean {
  if (token) {
    const given = Buffer.from(req.headers.authorization ?? '');
    const wanted = Buffer.from(`Bearer ${token}`);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }
  const from = req.socket.remoteAddress ?? '';
  const loopback = from === '::1' || from.startsWith('127.') || from.startsWith('::ffff:127.');
  return loopback && req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined;
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  //   GET /_/metrics  Prometheus text (src/metrics/metrics.ts); 404 to anyone else, as if absent.
  const anyHost = { config: { anyHost: true } };
  app.get('/_/metrics', anyHost, async (req, reply) => {
    if (!mayReadMetrics(req, s.config.metricsToken)) throw notFound();
    reply.header('cache-control', 'no-store').type(s.metrics.registry.contentType);
    return s.metrics.registry.metrics();
  });

  app.get('/_/health', anyHost, async (_req, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/_/ready', anyHost, async (_req, reply) => {
    const { ready, checks } = await readiness(s);
    reply.header('cache-control', 'no-store');
    if (!ready) reply.code(503).header('Retry-After', String(limits.storageRetryAfterSeconds));
    return reply.send({ status: ready ? 'ready' : 'unavailable', checks });
  });
};

export default plugin;
