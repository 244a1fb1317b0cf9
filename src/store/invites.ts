// The team invitations store: invitation rows (the rules about them: src/teams/invites.ts).
import type { Db, Executor, NewRow, Row } from './schema.ts';

/** Inserts an invitation row. */
export async function insertInvite(db: Db, row: NewRow<'team_invites'>): Promise<void> {
  await db.insertInto('team_invites').values(row).execute();
}

/** The unused, unexpired invitation with this token hash, or undefined. */
export function pendingInvite(db: Db, tokenHash: string, now: string): Promise<Row<'team_invites'> | undefined> {
  return db
    .selectFrom('team_invites')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks the invitation with this token hash used (once: false when it was used already). */
export async function markInviteUsed(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const used = await db
    .updateTable('team_invites')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}
