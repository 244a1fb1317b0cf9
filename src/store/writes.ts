// How a document's writes reach the database, chosen with it (src/store/db.ts). Either way a write runs in a
// transaction, is answered only after its COMMIT, and hands back the steps it queued for after the commit.
// - SQLite (`groupedWrites`): group commit. Writes that arrive while one is being written share its
//   transaction, each in a savepoint of its own, and one COMMIT (one disk flush) covers them all: the flush is
//   most of a save's cost. A write that fails rolls back to its savepoint alone; a COMMIT that fails fails every
//   write of its group (none of them is on disk). SQLite runs one transaction at a time on its one connection
//   anyway, in arrival order, so writes of one document stay in order.
// - PostgreSQL (`queuedWrites`): a transaction per write; writes of one document queue within a process (across
//   processes the row lock and the checksum compare decide).
import { sql } from 'kysely';
import type { Db } from './schema.ts';
import type { AfterCommit, Tx } from './transaction.ts';
import { isStorageFull, isStorageUnavailable } from './errors.ts';
import { KilnError } from '../errors.ts';

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
  result?: unknown;
  resolve(v: { result: unknown; after: AfterCommit }): void;
  reject(err: unknown): void;
};

export function groupedWrites(db: Db): DocumentWrites {
  const queue: Job[] = [];
  let running = false;

  /** One transaction: the first waiting write, then every write that arrives until the queue stays empty for a
   *  turn of the event loop (or MAX_GROUP). */
  async function group(): Promise<void> {
    const taken: Job[] = [queue.shift()!];
    const failed = new Set<Job>();
    /** The first full-disk error of the group: when the group then fails, that is why (a rollback or
     *  COMMIT that fails after it says only that the transaction is gone). */
    let full: unknown;
    try {
      await db.transaction().execute(async (tx) => {
        let waited = false;
        for (let i = 0; i < taken.length; i++) {
          const job = taken[i];
          await sql`SAVEPOINT kiln_write`.execute(tx);
          try {
            job.result = await job.work(tx, job.after);
          } catch (err) {
            failed.add(job);
            job.reject(err);
            if (full === undefined && isStorageFull(err)) full = err;
            // SQLite rolls the whole transaction back by itself on some errors (a full disk): then the group
            // fails, with that cause.
            await sql`ROLLBACK TO kiln_write`.execute(tx).catch(() => {
              throw err;
            });
          }
          await sql`RELEASE kiln_write`.execute(tx);
          if (i + 1 === taken.length && taken.length < MAX_GROUP) {
            // Requests whose bodies arrive during this turn of the event loop join the group.
            if (queue.length === 0 && !waited) {
              waited = true;
              await new Promise((r) => setImmediate(r));
            }
            const next = queue.shift();
            if (next) taken.push(next);
          }
        }
      });
    } catch (err) {
      const cause = full !== undefined && !isStorageFull(err) ? full : err;
      for (const job of taken) if (!failed.has(job)) job.reject(cause);
      return;
    }
    for (const job of taken) if (!failed.has(job)) job.resolve({ result: job.result, after: job.after });
  }

  async function drain(): Promise<void> {
    running = true;
    try {
      while (queue.length > 0) await group();
    } finally {
      running = false;
    }
  }

  return {
    run<T>(_key: number, work: Write<T>) {
      return new Promise<{ result: T; after: AfterCommit }>((resolve, reject) => {
        queue.push({ work, after: [], resolve: resolve as Job['resolve'], reject });
        if (!running) void drain();
      });
    },
  };
}

export function queuedWrites(db: Db): DocumentWrites {
  const queues = new Map<number, Promise<unknown>>();
  return {
    run<T>(key: number, work: Write<T>, committed?: (result: T) => Promise<boolean>) {
      const write = async () => {
        const after: AfterCommit = [];
        /** Set once the work is done: an error after it is the COMMIT's. */
        let done: { result: T } | undefined;
        try {
          const result = await db.transaction().execute(async (tx) => {
            const r = await work(tx, after);
            done = { result: r };
            return r;
          });
          return { result, after };
        } catch (err) {
          if (!done || !committed || !isStorageUnavailable(err)) throw err;
          // COMMIT was sent and its answer lost: whether it took is read back (a new connection).
          const took = await committed(done.result).catch(() => undefined);
          if (took === true) return { result: done.result, after };
          if (took === false) throw err;
          throw new KilnError(
            503,
            'The database went away while your change was being committed: it may or may not have been saved. Read it again before you retry.',
            'outcome-unknown',
          );
        }
      };
      const prev = queues.get(key) ?? Promise.resolve();
      const run = prev.then(write, write);
      const tail = run.catch(() => {});
      queues.set(key, tail);
      tail.then(() => queues.get(key) === tail && queues.delete(key));
      return run;
    },
  };
}
