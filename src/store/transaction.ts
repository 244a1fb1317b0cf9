// The one way to write (#46): every write transaction in src/ opens here, and nowhere else outside src/store/
// (lint/transactions-in-store.grit). Its callback may queue work for after the commit (its events). The queued
// steps run only once everything committed, in order, and never undo the write.
// The answer waits for them while the bus is flowing (published in process, or to a connected Redis),
// at most EVENT_WAIT_MS: so a write that is acknowledged has its events on the bus, and a process that
// dies right after answering loses none (a stream that reconnects elsewhere replays them). When Redis
// is away the answer does not wait at all: the events wait in the bus's outbox instead.
// A function, not a method of the database: it needs the bus as well (the after-commit wait), and takes
// only those two ports.
import type { Db, Tx } from './schema.ts';
import type { AfterCommit, DocumentWrites } from './writes.ts';
import type { EventBus } from '../events/bus.ts';

export type { Tx, AfterCommit };

/** What a write needs: the database, and the bus whose state says how long its answer waits for its events. */
export interface WritePorts {
  database: { db: Db; writes: DocumentWrites };
  events: Pick<EventBus, 'flowing'>;
}

/** A document save: it joins its document's queue of grouped writes (src/store/writes.ts), where the saves that
 *  arrive meanwhile share one COMMIT, each in a savepoint of its own, so one save that fails undoes itself
 *  alone. */
export interface DocumentWrite<T> {
  document: number;
  /** When the COMMIT's answer was lost: whether this write took (read back on a new connection). */
  committed?: (result: T) => Promise<boolean>;
}

/** The longest a write's answer waits for its events. */
export const EVENT_WAIT_MS = 500;

/** Runs `fn` in a transaction of its own, or, for a document save, in its document's group; then the steps it
 *  queued in `after` once it committed. All of it or none: `fn` throwing rolls it back. */
export async function inTransaction<T>(
  ports: WritePorts,
  fn: (tx: Tx, after: AfterCommit) => Promise<T>,
  write?: DocumentWrite<T>,
): Promise<T> {
  if (write) {
    const done = await ports.database.writes.run(write.document, fn, write.committed);
    await afterCommit(ports, done.after);
    return done.result;
  }
  const after: AfterCommit = [];
  const result = await ports.database.db.transaction().execute((tx) => fn(tx, after));
  await afterCommit(ports, after);
  return result;
}

/** Runs a committed write's queued steps: each starts at once, in the order queued (so its events are published
 *  in that order); waits for them as `eventsOut` says. */
async function afterCommit(s: Pick<WritePorts, 'events'>, after: AfterCommit): Promise<void> {
  const steps = after.map((step) =>
    Promise.resolve()
      .then(step)
      .catch((err) => console.error('an after-commit step failed:', err)),
  );
  await eventsOut(s, steps);
}

/** Waits for a write's event publications while the bus is flowing, at most EVENT_WAIT_MS. */
export async function eventsOut(s: Pick<WritePorts, 'events'>, published: Array<Promise<unknown>>): Promise<void> {
  if (published.length === 0 || !s.events.flowing()) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(published),
    new Promise((resolve) => {
      timer = setTimeout(resolve, EVENT_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}
