// The queries of plans and payments: provider webhook events seen once, what a plan's allowances count, the
// one-time link a checkout mails.
import type { Db, Executor, Tx } from './schema.ts';

/** Records a provider's event as handled; a second one with the same id fails with a unique violation. */
export async function recordWebhookEvent(trx: Tx, provider: string, eventId: string, at: string): Promise<void> {
  await trx.insertInto('webhook_events').values({ provider, event_id: eventId, received_at: at }).execute();
}

/** Forgets a handled event, so that its redelivery is handled again. */
export async function forgetWebhookEvent(db: Db, provider: string, eventId: string): Promise<void> {
  await db.deleteFrom('webhook_events').where('provider', '=', provider).where('event_id', '=', eventId).execute();
}

/** The account's custom domains that count against its plan (all but `failed` ones). */
export async function countedDomains(db: Executor, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('domains')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', '!=', 'failed')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Uses a checkout's welcome link once: true when this call used it (unused, of that purpose). */
export async function useCheckoutToken(trx: Tx, tokenHash: string, now: string): Promise<boolean> {
  const used = await trx
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', 'checkout')
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}
