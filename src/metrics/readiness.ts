// Whether this process can serve: its database, blob store and (when configured) Redis answer in time.
import type { Services } from '../services.ts';
import { ping } from '../store/db.ts';

const CHECK_MS = 2_000;

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

const reachable = (ok: boolean) => (ok ? ok : Promise.reject(new Error('unreachable')));

/** Each part's state, and whether all the process needs answer. */
export async function readiness(s: Pick<Services, 'database' | 'blobs' | 'events' | 'config'>) {
  const [database, blobs, bus] = await Promise.all([
    within(ping(s.database.db), CHECK_MS),
    within(s.blobs.reachable().then(reachable), CHECK_MS),
    within(s.events.reachable().then(reachable), CHECK_MS),
  ]);
  const checks = {
    database: database ? 'ok' : 'unavailable',
    blobs: blobs ? 'ok' : 'unavailable',
    ...(s.config.redisUrl ? { redis: bus ? 'ok' : 'unavailable' } : {}),
  };
  return { ready: database && blobs && (bus || !s.config.redisUrl), checks };
}
