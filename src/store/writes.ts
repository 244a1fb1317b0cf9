// How a document's writes reach the database, chosen with it (src/store/db.ts). Either way a write runs in a
// transaction, is answered only after its COMMIT, and hands back the steps it queued for after the commit.
// Both group commit: writes that arrive while one is being written share its transaction, each after the first
// in a savepoint of its own, and one COMMIT (one disk flush, one round trip) covers them all. A write that fails
// rolls back to its savepoint alone (the first, with no savepoint, rolls back the transaction before anything
// else joined it); a COMMIT that fails fails every write of its group (none of them is on disk).
// - SQLite (`groupedWrites`): one queue. SQLite runs one transaction at a time on its one connection anyway,
//   in arrival order, so writes of one document stay in order.
// - PostgreSQL (`groupedPerDocument`): a queue per document, so a group locks one document's row and
//   different documents commit in parallel on their own connections (never two groups waiting on each
//   other's rows). Across processes the row lock and the checksum compare decide.
import { sql } from 'kysely';
import type { Db, Tx } from './schema.ts';

/** Steps to run after a write's commit (src/store/transaction.ts runs them). */
export type AfterCommit = Array<() => unknown>;
import { isStorageFull, isStorageUnavailable } from './errors.ts';
import { KilnError } from '../errors.ts';
import { endGroup, restore, setDeferring, snapshot, startGroup } from './group-state.ts';

export type Write<T> = (tx: Tx, after: AfterCommit) => Promise<T>;

export interface DocumentWrites {
  /** Runs `work` in a transaction; `key` names what it writes (a document id). When the connection is lost
   *  after COMMIT was sent, `committed(result)` reads back whether it took: then the write is answered as
   *  done (its after-commit steps run), or as not done; when even that cannot be read, 503 `outcome-unknown`. */
  run<T>(
    key: number,
    work: Write<T>,
    committed?: (result: T) => Promise<boolean>,
  ): Promise<{ result: T; after: AfterCommit }>;
}

/** The most writes one COMMIT covers. */
const MAX_GROUP = 64;

type Job = {
  work: Write<unknown>;
  after: AfterCommit;
  committed?: (result: unknown) => Promise<boolean>;
  result?: unknown;
  resolve(v: { result: unknown; after: AfterCommit }): void;
  reject(err: unknown): void;
};

/** One transaction: the first waiting write, then the writes waiting once it is written (or that arrive in the
 *  next turn of the event loop), at most MAX_GROUP. */
async function group(db: Db, queue: Job[]): Promise<void> {
  const taken: Job[] = [queue.shift()!];
  const failed = new Set<Job>();
  /** The first full-disk error of the group: when the group then fails, that is why (a rollback or
   *  COMMIT that fails after it says only that the transaction is gone). */
  let full: unknown;
  /** Set once every write's work is done: an error after it is the COMMIT's. */
  let worked = false;
  try {
    await db.transaction().execute(async (tx) => {
      // What one write leaves for the next (src/store/group-state.ts): the writes waiting now join this group,
      // so the first already defers its content to the group's last.
      startGroup(tx, queue.length > 0);
      // The first write needs no savepoint: when it fails, the whole transaction rolls back with nothing
      // else in it yet.
      taken[0].result = await taken[0].work(tx, taken[0].after);
      // Requests whose bodies arrive during this turn of the event loop join the group, with those that queued
      // meanwhile; the ones that queue while these are written wait for the next group, which starts at once:
      // a group that took every newcomer would gather all of a document's writers, and answer them together,
      // leaving the database idle while they come back.
      if (queue.length === 0) await new Promise((r) => setImmediate(r));
      for (let room = Math.min(queue.length, MAX_GROUP - 1); room > 0; room--) {
        const job = queue.shift()!;
        taken.push(job);
        setDeferring(tx, room > 1);
        // Never released: COMMIT ends them all, ROLLBACK TO names the newest, and a release is one more round
        // trip per write on PostgreSQL.
        await sql`SAVEPOINT kiln_write`.execute(tx);
        const state = snapshot(tx);
        try {
          job.result = await job.work(tx, job.after);
        } catch (err) {
          failed.add(job);
          job.reject(err);
          restore(tx, state);
          if (full === undefined && isStorageFull(err)) full = err;
          // SQLite rolls the whole transaction back by itself on some errors (a full disk): then the group
          // fails, with that cause.
          await sql`ROLLBACK TO kiln_write`.execute(tx).catch(() => {
            throw err;
          });
        }
      }
      await endGroup(tx);
      worked = true;
    });
  } catch (err) {
    if (worked) return settleLostCommit(taken, failed, err);
    const cause = full !== undefined && !isStorageFull(err) ? full : err;
    for (const job of taken) if (!failed.has(job)) job.reject(cause);
    return;
  }
  for (const job of taken) if (!failed.has(job)) job.resolve({ result: job.result, after: job.after });
}

/** COMMIT was sent and failed, or its answer was lost: each write reads back whether it took (on a new
 *  connection) and is answered as done, as not done, or 503 `outcome-unknown` when even that cannot be read. */
async function settleLostCommit(taken: Job[], failed: Set<Job>, err: unknown): Promise<void> {
  for (const job of taken) {
    if (failed.has(job)) continue;
    if (!job.committed || !isStorageUnavailable(err)) {
      job.reject(err);
      continue;
    }
    const took = await job.committed(job.result).catch(() => undefined);
    if (took === true) job.resolve({ result: job.result, after: job.after });
    else if (took === false) job.reject(err);
    else
      job.reject(
        new KilnError(
          503,
          'The database went away while your change was being committed: it may or may not have been saved. Read it again before you retry.',
          'outcome-unknown',
        ),
      );
  }
}

/** A queue drained one group at a time. */
function groupQueue(db: Db) {
  const queue: Job[] = [];
  let running = false;
  return {
    get idle() {
      return !running && queue.length === 0;
    },
    push(job: Job, drained: () => void) {
      queue.push(job);
      if (running) return;
      running = true;
      void (async () => {
        try {
          while (queue.length > 0) await group(db, queue);
        } finally {
          running = false;
          drained();
        }
      })();
    },
  };
}

function enqueue<T>(
  q: ReturnType<typeof groupQueue>,
  work: Write<T>,
  committed: ((result: T) => Promise<boolean>) | undefined,
  drained: () => void = () => {},
) {
  return new Promise<{ result: T; after: AfterCommit }>((resolve, reject) => {
    q.push(
      {
        work,
        after: [],
        committed: committed as Job['committed'],
        resolve: resolve as Job['resolve'],
        reject,
      },
      drained,
    );
  });
}

export function groupedWrites(db: Db): DocumentWrites {
  const q = groupQueue(db);
  return { run: (_key, work, committed) => enqueue(q, work, committed) };
}

export function groupedPerDocument(db: Db): DocumentWrites {
  const queues = new Map<number, ReturnType<typeof groupQueue>>();
  return {
    run(key, work, committed) {
      let q = queues.get(key);
      if (!q) queues.set(key, (q = groupQueue(db)));
      const mine = q;
      return enqueue(mine, work, committed, () => {
        if (mine.idle && queues.get(key) === mine) queues.delete(key);
      });
    },
  };
}
