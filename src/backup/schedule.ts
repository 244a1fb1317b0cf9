// Scheduled backups (BACKUP_EVERY, BACKUP_DIR, BACKUP_KEEP), like PocketBase's: one process takes them
// (the only one, or the worker in slot 0 of `kiln serve --workers`, which a replacement takes over); on
// several machines, set BACKUP_EVERY on one of them.
import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.ts';
import { pruneBackups, takeBackup } from './backup.ts';

/** The environment variable in which `kiln serve --workers` tells each worker its slot. */
export const WORKER_SLOT = 'KILN_WORKER_SLOT';

export function scheduleBackups(s: Services, log: FastifyBaseLogger): { stop(): Promise<void> } {
  const plan = s.config.backups;
  if (!plan || (cluster.isWorker && process.env[WORKER_SLOT] !== '0')) return { stop: async () => {} };
  let running: Promise<void> | null = null;
  const once = () => {
    if (running) return;
    running = (async () => {
      try {
        const { location, manifest } = await takeBackup(s, plan.dir);
        const gone = await pruneBackups(plan.dir, plan.keep);
        log.info({ location, bytes: manifest.bytes, blobs: manifest.blobs, pruned: gone.length }, 'backup taken');
      } catch (err) {
        log.error({ err }, 'scheduled backup failed; trying again at the next one');
      } finally {
        running = null;
      }
    })();
  };
  const timer = setInterval(once, plan.everyMs).unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
