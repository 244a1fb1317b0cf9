// `kiln serve [--workers N]`: one process, or a primary and N worker processes (node:cluster). Workers
// share nothing in memory, so N > 1 needs what several processes share: PostgreSQL (or SQLite on one
// machine) and Redis for events, caches and rate limits.
//
// With workers, the primary holds the port and hands each connection to a ready worker (round robin), so
// the port stays open while the primary lives: with no worker ready (all restarting), a connection waits
// up to 5 s for one, then gets a 503 `no-worker`. A handed-over connection lives in its worker alone,
// so a worker's death closes it at once (a client or balancer sees a reset and retries; nothing hangs).
// A worker that dies is replaced, after a pause that grows while workers keep dying young (a crash loop),
// each death logged. SIGTERM or SIGINT stops gracefully: no new connections, in-flight requests (saves)
// finish, streams are told to reconnect elsewhere, and the process exits within 10 seconds whatever
// happens.
import cluster, { type Worker } from 'node:cluster';
import net from 'node:net';
import { addressWarning, type Config } from './config.ts';
import { startServer, type Running } from './server.ts';
import { exitDeadline } from './exit-deadline.ts';
import { ERRORS } from './errors.ts';
import { answerOnSocket } from './http/socket-answer.ts';
import { WORKER_SLOT } from './backup/schedule.ts';
import { assertDatabaseReachable, DatabaseUnavailable } from './store/reach.ts';

const STOP_DEADLINE_MS = 10_000;
/** How long a connection waits for a worker when none is ready, and how many may wait. */
const HOLD_MS = 5_000;
const MAX_HELD = 1_000;
/** A worker that dies younger than this counts toward a crash loop; the pause before the next start
 *  doubles with each such death, from RESTART_MS up to MAX_RESTART_MS. */
const YOUNG_MS = 10_000;
const RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;

/** The messages between the primary and its workers. */
type Message = { kiln: 'ready' } | { kiln: 'connection'; id: number } | { kiln: 'taken'; id: number };

export async function serve(config: Config, workers: number): Promise<void> {
  if (workers > 1 && cluster.isPrimary) {
    // A database that does not exist (or refuses the role) would fail every worker, forever: say it once
    // and stop. One that is not answering yet (a server starting with the machine) is waited for: the
    // workers start, and are restarted with a growing pause, while the port answers 503 `no-worker`.
    if (config.databaseUrl)
      await assertDatabaseReachable(config.databaseUrl).catch((err) => {
        if (!(err instanceof DatabaseUnavailable) || err.lasting) throw err;
        console.error(`${err.message} Starting the workers anyway: they retry until it answers.`);
      });
    return primary(config, workers);
  }
  const worker = cluster.isWorker;
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
  running = await startServer(config, undefined, { listen: !worker });
  if (stopping) {
    await running.close();
    process.exit(0);
  }
  if (worker) {
    const r = running;
    process.on('message', (m: Message, socket?: net.Socket) => {
      if (m?.kiln !== 'connection' || !socket) return;
      // One that arrives while stopping is closed: the primary stopped handing out before it stops us.
      if (stopping) socket.destroy();
      else r.accept(socket);
      process.send?.({ kiln: 'taken', id: m.id } satisfies Message);
    });
    process.send?.({ kiln: 'ready' } satisfies Message);
    return;
  }
  console.log(`Kiln is running: main app ${config.baseUrl}  (documents at http://<username>.${config.rootDomain}/)`);
  const warning = addressWarning(config, Number(new URL(running.url).port));
  if (warning) console.warn(`Warning: ${warning}`);
}

function primary(config: Config, workers: number) {
  if (!config.redisUrl) {
    console.error('kiln serve --workers needs REDIS_URL: workers share events, caches and rate limits through it.');
    process.exit(2);
  }
  let stopping = false;
  const ready: Worker[] = [];
  const held: { socket: net.Socket; timer: NodeJS.Timeout }[] = [];
  let next = 0;
  let youngDeaths = 0;
  let announced = false;

  const refuse = (socket: net.Socket) =>
    answerOnSocket(socket, 503, ERRORS['no-worker'].when, { code: 'no-worker', headers: { 'Retry-After': '1' } });
  const hold = (socket: net.Socket) => {
    if (stopping || held.length >= MAX_HELD) return refuse(socket);
    const entry = {
      socket,
      timer: setTimeout(() => {
        held.splice(held.indexOf(entry), 1);
        refuse(socket);
      }, HOLD_MS),
    };
    held.push(entry);
  };
  // Connections on their way to each worker, by id, until the worker says it took one. The primary keeps
  // its own copy of each until then (node would keep it, unclosed, whenever a worker dies with a handle
  // unacknowledged: a hang), and closes it then, or when the worker dies (a reset, not a hang).
  const inTransit = new Map<Worker, Map<number, net.Socket>>();
  let ids = 0;
  const handOut = (socket: net.Socket) => {
    if (ready.length === 0) return hold(socket);
    const w = ready[next++ % ready.length];
    const id = ++ids;
    const transit = inTransit.get(w) ?? new Map();
    inTransit.set(w, transit.set(id, socket));
    w.send({ kiln: 'connection', id } satisfies Message, socket, { keepOpen: true }, (err) => {
      if (err) {
        transit.delete(id);
        socket.destroy();
      }
    });
  };
  const unready = (w: Worker) => {
    const i = ready.indexOf(w);
    if (i >= 0) ready.splice(i, 1);
  };

  const server = net.createServer({ pauseOnConnect: true }, handOut);
  server.on('error', (err) => {
    console.error(`kiln serve: cannot listen on ${config.host}:${config.port}: ${err.message}`);
    process.exit(1);
  });
  server.listen(config.port, config.host);

  // Each worker has a slot (0 … N-1) that its replacement takes over: the one in slot 0 takes the
  // scheduled backups (src/backup/schedule.ts), whichever process that is by now.
  const fork = (slot: number) => {
    if (stopping) return;
    const startedAt = Date.now();
    const w = cluster.fork({ [WORKER_SLOT]: String(slot) });
    w.on('message', (m: Message) => {
      if (m?.kiln === 'taken') {
        inTransit.get(w)?.get(m.id)?.destroy();
        inTransit.get(w)?.delete(m.id);
        return;
      }
      if (m?.kiln !== 'ready' || stopping) return;
      ready.push(w);
      for (const { socket, timer } of held.splice(0)) {
        clearTimeout(timer);
        handOut(socket);
      }
      if (!announced && ready.length === workers) {
        announced = true;
        console.log(
          `Kiln is running with ${workers} workers: main app ${config.baseUrl}  (documents at http://<username>.${config.rootDomain}/)`,
        );
      }
    });
    w.on('exit', (code, signal) => {
      unready(w);
      for (const socket of inTransit.get(w)?.values() ?? []) socket.destroy();
      inTransit.delete(w);
      if (stopping) return;
      const lived = Date.now() - startedAt;
      youngDeaths = lived < YOUNG_MS ? youngDeaths + 1 : 0;
      const pause = Math.min(MAX_RESTART_MS, RESTART_MS * 2 ** Math.max(0, youngDeaths - 1));
      console.error(
        `worker ${w.process.pid} ended (${signal ?? code}) after ${Math.round(lived / 1000)} s; starting another in ${pause / 1000} s` +
          (youngDeaths > 1 ? ` (${youngDeaths} workers in a row died within ${YOUNG_MS / 1000} s of starting)` : ''),
      );
      setTimeout(() => fork(slot), pause);
    });
  };
  for (let slot = 0; slot < workers; slot++) fork(slot);

  const deadline = exitDeadline(STOP_DEADLINE_MS + 1000);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    deadline.arm();
    server.close();
    for (const { socket, timer } of held.splice(0)) {
      clearTimeout(timer);
      refuse(socket);
    }
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
