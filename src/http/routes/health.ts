// Health of the process, for load balancers and orchestrators (any host):
//   GET /_/health   200 {status:'ok'} while the process runs and answers (liveness)
//   GET /_/ready    200 when the database (and Redis, when configured) answer; else 503 naming what is
//                   unreachable, with Retry-After: take this process out of rotation until it recovers.
import { sql } from 'kysely';
import type { RoutePlugin } from './index.ts';
import { limits } from '../../limits.ts';

/** Resolves false when `p` fails or takes longer than `ms`. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.then(
      () => {
        clearTimeout(t);
        resolve(true);
      },
      () => {
        clearTimeout(t);
        resolve(false);
      },
    );
  });
}

const CHECK_MS = 2_000;

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/health', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/_/ready', async (_req, reply) => {
    const [database, bus] = await Promise.all([
      within(sql`select 1`.execute(s.database.db), CHECK_MS),
      within(
        s.events.reachable().then((ok) => (ok ? ok : Promise.reject(new Error('unreachable')))),
        CHECK_MS,
      ),
    ]);
    const checks = {
      database: database ? 'ok' : 'unavailable',
      ...(s.config.redisUrl ? { redis: bus ? 'ok' : 'unavailable' } : {}),
    };
    const ready = database && (bus || !s.config.redisUrl);
    reply.header('cache-control', 'no-store');
    if (!ready) reply.code(503).header('Retry-After', String(limits.storageRetryAfterSeconds));
    return reply.send({ status: ready ? 'ready' : 'unavailable', checks });
  });
};

export default plugin;
