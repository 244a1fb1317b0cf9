// What sync keys and agent keys share in the store: a table each with the same columns for a key's life (its
// person's `account_id`, `revoked_at`, `last_used_at`), so revoking a key and noting its use are one statement for
// both. (Each kind's own queries: src/store/sync-keys.ts, src/store/agent-keys.ts.)
import type { Executor } from './schema.ts';

export type KeyTable = 'sync_keys' | 'agent_keys';

/** Revokes an active key of the person; false when they have none such. */
export async function revokeKeyRow(
  db: Executor,
  table: KeyTable,
  accountId: number,
  keyId: number,
  at: string,
): Promise<boolean> {
  const r = await db
    .updateTable(table)
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Records when a key was last used. */
export async function touchKeyRow(db: Executor, table: KeyTable, keyId: number, at: string): Promise<void> {
  await db.updateTable(table).set({ last_used_at: at }).where('id', '=', keyId).execute();
}
