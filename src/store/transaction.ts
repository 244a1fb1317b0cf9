// The one way to write: a transaction whose callback may queue work for after the commit (events,
// the utility stylesheet). The queued steps run only once everything committed, in order, never
// awaited by the writer (a save never waits on the bus) and never able to undo the write.
import type { Transaction } from 'kysely';
import type { DB } from './schema.ts';
import type { Services } from '../services.ts';

export type Tx = Transaction<DB>;

/** Steps to run after the commit. */
export type AfterCommit = Array<() => unknown>;

export async function inTransaction<T>(s: Services, fn: (tx: Tx, after: AfterCommit) => Promise<T>): Promise<T> {
  const after: AfterCommit = [];
  const result = await s.database.db.transaction().execute((tx) => fn(tx, after));
  // Each step starts at once, in the order queued (so its events are published in that order).
  for (const step of after) {
    Promise.resolve()
      .then(step)
      .catch((err) => console.error('an after-commit step failed:', err));
  }
  return result;
}
