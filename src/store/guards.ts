// The data-clobber guard's rows (src/guard/guard.ts): one per guarded document, and the checks its writes owe.
import type { Executor, Db, Row, Tx } from './schema.ts';
import { recordActivity, type ActivityRow } from './activity.ts';
import { inTransaction, type WritePorts } from './transaction.ts';

export interface GuardRow {
  baseline: string | null;
  ui_work_pending: number;
  event_id: string | null;
  event: string | null;
  event_at: string | null;
  safe_version_id: number | null;
}

const GUARD_COLUMNS = ['baseline', 'ui_work_pending', 'event_id', 'event', 'event_at', 'safe_version_id'] as const;

export function guardRow(db: Executor, nodeId: number): Promise<GuardRow | undefined> {
  return db.selectFrom('data_loss_guards').select(GUARD_COLUMNS).where('node_id', '=', nodeId).executeTakeFirst();
}

export type OwedCheck = Row<'data_loss_checks'>;

/** The checks a document's writes owe, oldest first. */
export function owedChecks(db: Db, nodeId: number): Promise<OwedCheck[]> {
  return db
    .selectFrom('data_loss_checks')
    .selectAll()
    .where('node_id', '=', nodeId)
    .orderBy('version_id')
    .limit(1000)
    .execute();
}

/** The documents with owed checks (a process starting runs them). */
export async function nodesOwingChecks(db: Db): Promise<number[]> {
  const rows = await db.selectFrom('data_loss_checks').select('node_id').distinct().execute();
  return rows.map((r) => r.node_id);
}

/** Applies the outcome of owed checks in one transaction: they are deleted (all of them must still be owed) and
 *  the guard's row becomes `next` (null: unchanged), only if it is still `expect` (what the outcome was worked out
 *  from; undefined: no row). False, with nothing written, when another process applied them or changed the row
 *  meanwhile. `lock` holds off the document's other writers until the commit. */
export async function applyGuardChecks(
  ports: WritePorts,
  a: {
    nodeId: number;
    ownerId: number;
    versionIds: number[];
    expect: GuardRow | undefined;
    next: GuardRow | null;
    /** The activity line of the outcome (an event raised or ended), committed with it. */
    activity?: ActivityRow;
    now: string;
    lock: (tx: Tx) => Promise<void>;
  },
): Promise<boolean> {
  const stale = new Error('stale');
  try {
    await inTransaction(ports, async (tx) => {
      await a.lock(tx);
      const gone = await tx.deleteFrom('data_loss_checks').where('version_id', 'in', a.versionIds).executeTakeFirst();
      if (Number(gone.numDeletedRows) !== a.versionIds.length) throw stale;
      if (!sameRow(await guardRow(tx, a.nodeId), a.expect)) throw stale;
      if (a.next) await putGuardRow(tx, a.nodeId, a.ownerId, a.next, a.now);
      if (a.activity) await recordActivity(tx, a.activity);
    });
    return true;
  } catch (err) {
    if (err === stale) return false;
    throw err;
  }
}

function sameRow(a: GuardRow | undefined, b: GuardRow | undefined): boolean {
  if (!a || !b) return a === b;
  return GUARD_COLUMNS.every((c) => a[c] === b[c]);
}

/** Forgets a document's owed checks (it is gone, or in the trash). */
export async function dropOwedChecks(db: Db, nodeId: number): Promise<void> {
  await db.deleteFrom('data_loss_checks').where('node_id', '=', nodeId).execute();
}

export async function putGuardRow(
  db: Executor,
  nodeId: number,
  ownerId: number,
  row: GuardRow,
  now: string,
): Promise<void> {
  const values = { ...row, updated_at: now };
  await db
    .insertInto('data_loss_guards')
    .values({ node_id: nodeId, owner_id: ownerId, ...values })
    .onConflict((oc) => oc.column('node_id').doUpdateSet(values))
    .execute();
}

/** The documents of an account with a pending event (the dashboard's marks). */
export async function pendingGuardNodes(db: Db, ownerId: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('data_loss_guards')
    .select('node_id')
    .where('owner_id', '=', ownerId)
    .where('event_at', 'is not', null)
    .execute();
  return new Set(rows.map((r) => r.node_id));
}

/** Events raised before `before` (ISO) are dropped: the loss is accepted (the versions still hold it). */
export async function sweepGuardEvents(db: Db, before: string, now: string): Promise<void> {
  await db
    .updateTable('data_loss_guards')
    .set({
      baseline: null,
      ui_work_pending: 0,
      event_id: null,
      event: null,
      event_at: null,
      safe_version_id: null,
      updated_at: now,
    })
    .where('event_at', '<', before)
    .execute();
}
