// The one way to write: a transaction whose callback may queue work for after the commit (its
// events). The queued steps run only once everything committed, in order, and never undo the write.
// The answer waits for them while the bus is flowing (published in process, or to a connected Redis),
// at most EVENT_WAIT_MS: so a write that is acknowledged has its events on the bus, and a process that
// dies right after answering loses none (a stream that reconnects elsewhere replays them). When Redis
// is away the answer does not wait at all: the events wait in the bus's outbox instead.
import type { Db, Tx } from './schema.ts';
import type { EventBus } from '../events/bus.ts';

export type { Tx };

/** Steps to run after the commit. */
export type AfterCommit = Array<() => unknown>;

/** What a transaction uses of the services: the database and the event bus (the Services fit). */
export interface TxPorts {
  database: { db: Db };
  events: EventBus;
}

/** The longest a write's answer waits for its events. */
export const EVENT_WAIT_MS = 500;

export async function inTransaction<T>(s: TxPorts, fn: (tx: Tx, after: AfterCommit) => Promise<T>): Promise<T> {
  const after: AfterCommit = [];
  const result = await s.database.db.transaction().execute((tx) => fn(tx, after));
  await afterCommit(s, after);
  return result;
}

/** Runs a committed write's queued steps: each starts at once, in the order queued (so its events are published
 *  in that order); waits for them as `eventsOut` says. */
export async function afterCommit(s: Pick<TxPorts, 'events'>, after: AfterCommit): Promise<void> {
  const steps = after.map((step) =>
    Promise.resolve()
      .then(step)
      .catch((err) => console.error('an after-commit step failed:', err)),
  );
  await eventsOut(s, steps);
}

/** Waits for a write's event publications while the bus is flowing, at most EVENT_WAIT_MS. */
export async function eventsOut(s: Pick<TxPorts, 'events'>, published: Array<Promise<unknown>>): Promise<void> {
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
