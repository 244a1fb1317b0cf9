// Scheduled backups (BACKUP_EVERY, BACKUP_DIR, BACKUP_KEEP), like PocketBase's: one process takes them
// (the only one, or the first worker of `kiln serve --workers`); on several machines, set BACKUP_EVERY
// on one of them.
import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.ts';
import { pruneBackups, takeBackup } from './backup.ts';

export function scheduleBackups(s: Services, log: FastifyBaseLogger): { stop(): Promise<void> } {
  const plan = s.config.backups;
  if (!plan || (cluster.isWorker && cluster.worker?.id !== 1)) return { stop: async () => {} };
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
