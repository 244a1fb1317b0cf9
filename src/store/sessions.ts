// The sessions store: the sign-ins of an account and ending them. (The session life cycle itself:
// src/accounts/sessions.ts.)
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** Live sessions of an account (logins and their host sessions). */
export function liveLogins(db: Kysely<DB>, accountId: number, now: Date) {
  return db
    .selectFrom('sessions')
    .select(['id', 'host', 'login_id', 'created_at', 'expires_at', 'user_agent'])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Ends an account's live sessions: all of them; all but one login (`keepLoginId`: that login stays,
 *  its host sessions end); or one login with its host sessions (`onlyLoginId`). Returns the ids ended. */
export async function endSessions(
  db: Kysely<DB>,
  accountId: number,
  now: Date,
  o: { keepLoginId?: number; onlyLoginId?: number },
): Promise<number[]> {
  let q = db
    .updateTable('sessions')
    .set({ revoked_at: now.toISOString() })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null);
  if (o.keepLoginId !== undefined) q = q.where('id', '!=', o.keepLoginId);
  if (o.onlyLoginId !== undefined) {
    const id = o.onlyLoginId;
    q = q.where((eb) => eb.or([eb.and([eb('id', '=', id), eb('host', 'is', null)]), eb('login_id', '=', id)]));
  }
  return (await q.returning('id').execute()).map((r) => r.id);
}
