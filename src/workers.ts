// `kiln serve [--workers N]`: one process, or N worker processes (node:cluster) sharing one port. Workers
// share nothing in memory, so N > 1 needs what several processes share: PostgreSQL (or SQLite on one
// machine) and Redis for events, caches and rate limits. A worker that dies is replaced. SIGTERM or
// SIGINT stops gracefully: no new connections, in-flight requests (saves) finish, streams are told to
// reconnect elsewhere, and the process exits within 10 seconds whatever happens.
import cluster from 'node:cluster';
import { addressWarning, type Config } from './config.ts';
import { startServer, type Running } from './server.ts';
import { exitDeadline } from './exit-deadline.ts';

const STOP_DEADLINE_MS = 10_000;

export async function serve(config: Config, workers: number): Promise<void> {
  if (workers > 1 && cluster.isPrimary) return primary(config, workers);
  let running: Running | null = null;
  let stopping = false;
  const deadline = exitDeadline(STOP_DEADLINE_MS);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // On a thread of its own: a main thread blocked on its log (a stalled pipe) cannot hold it up.
    deadline.arm();
    // Still starting: the start finishes, then stops (below).
    if (!running) return;
    running.close().then(
      () => process.exit(0),
      (err) => {
        console.error('stopping failed:', err);
        process.exit(1);
      },
    );
  };
  // Listening for a stop before starting, so that one asked for during the start is not lost (a
  // worker's primary sends SIGTERM too).
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  running = await startServer(config);
  if (stopping) {
    await running.close();
    process.exit(0);
  }
  if (cluster.isPrimary) {
    console.log(`Kiln is running: main app ${config.baseUrl}  (documents at http://<username>.${config.rootDomain}/)`);
    const warning = addressWarning(config, Number(new URL(running.url).port));
    if (warning) console.warn(`Warning: ${warning}`);
  }
}

function primary(config: Config, workers: number) {
  if (!config.redisUrl) {
    console.error('kiln serve --workers needs REDIS_URL: workers share events, caches and rate limits through it.');
    process.exit(2);
  }
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    console.error(`worker ${worker.process.pid} ended (${signal ?? code}); starting another`);
    setTimeout(fork, 500);
  });
  let online = 0;
  cluster.on('listening', () => {
    if (++online === workers)
      console.log(
        `Kiln is running with ${workers} workers: main app ${config.baseUrl}  (documents at http://<username>.${config.rootDomain}/)`,
      );
  });
  const deadline = exitDeadline(STOP_DEADLINE_MS + 1000);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    deadline.arm();
    // A signal, not a message: a worker still starting has no message listener yet, and a signal that
    // arrives before its handler simply ends it.
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    const check = setInterval(() => {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        clearInterval(check);
        process.exit(0);
      }
    }, 100);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
