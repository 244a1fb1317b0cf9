// The data-clobber guard's rows (src/guard/guard.ts): one per guarded document.
import type { Db } from './schema.ts';

export interface GuardRow {
  baseline: string | null;
  ui_work_pending: number;
  event_id: string | null;
  event: string | null;
  event_at: string | null;
}

export function guardRow(db: Db, nodeId: number): Promise<GuardRow | undefined> {
  return db
    .selectFrom('data_loss_guards')
    .select(['baseline', 'ui_work_pending', 'event_id', 'event', 'event_at'])
    .where('node_id', '=', nodeId)
    .executeTakeFirst();
}

export async function putGuardRow(db: Db, nodeId: number, ownerId: number, row: GuardRow, now: string): Promise<void> {
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
    .set({ baseline: null, ui_work_pending: 0, event_id: null, event: null, event_at: null, updated_at: now })
    .where('event_at', '<', before)
    .execute();
}
