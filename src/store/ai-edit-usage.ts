// Each account's use of the built-in AI engines per UTC day (src/ai-edit/budget.ts): one row per account and day.
import { sql } from 'kysely';
import type { Db } from './schema.ts';

export interface Usage {
  requests: number;
  bytes: number;
}

/** Counts a request of `bytes` on `day` when it fits `budget`. Returns null when counted, else what was used that
 *  day. */
export async function charge(
  db: Db,
  accountId: number,
  day: string,
  bytes: number,
  budget: Usage,
): Promise<Usage | null> {
  await db
    .insertInto('ai_edit_usage')
    .values({ account_id: accountId, day, requests: 0, bytes: 0 })
    .onConflict((oc) => oc.columns(['account_id', 'day']).doNothing())
    .execute();
  let q = db
    .updateTable('ai_edit_usage')
    .set({ requests: sql`requests + 1`, bytes: sql`bytes + ${bytes}` })
    .where('account_id', '=', accountId)
    .where('day', '=', day);
  if (budget) q = q.where('requests', '<', budget.requests).where(sql<number>`bytes + ${bytes}`, '<=', budget.bytes);
  const r = await q.executeTakeFirst();
  if (Number(r.numUpdatedRows) === 1) return null;
  return (await usageOn(db, [accountId], day)).get(accountId) ?? { requests: 0, bytes: 0 };
}

/** What each of the accounts used on `day` (accounts that used nothing are absent). */
export async function usageOn(db: Db, accountIds: number[], day: string): Promise<Map<number, Usage>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('ai_edit_usage')
    .select(['account_id', 'requests', 'bytes'])
    .where('day', '=', day)
    .where('account_id', 'in', accountIds)
    .execute();
  return new Map(rows.map((r) => [r.account_id, { requests: Number(r.requests), bytes: Number(r.bytes) }]));
}

/** Forgets the days before `day`. */
export async function sweepUsage(db: Db, day: string): Promise<void> {
  await db.deleteFrom('ai_edit_usage').where('day', '<', day).execute();
}
