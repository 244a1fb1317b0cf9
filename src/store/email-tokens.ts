// The email tokens store: one-time tokens' rows (the rules about them: src/accounts/email-tokens.ts).
import type { Db, Executor, NewRow, Row } from './schema.ts';

/** Inserts an email token row. */
export async function insertEmailToken(db: Db, row: NewRow<'email_tokens'>): Promise<void> {
  await db.insertInto('email_tokens').values(row).execute();
}

/** The unused, unexpired token row with this hash for `purpose`, or undefined. */
export function pendingEmailToken(
  db: Db,
  tokenHash: string,
  purpose: Row<'email_tokens'>['purpose'],
  now: string,
): Promise<Row<'email_tokens'> | undefined> {
  return db
    .selectFrom('email_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks a token row used (once: false when it was used meanwhile). */
export async function markEmailTokenUsed(db: Executor, id: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
