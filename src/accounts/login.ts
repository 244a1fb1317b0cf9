// Checking credentials. An unknown email or username costs the same scrypt work as a wrong password.
import type { Db } from '../store/schema.ts';
import { verifyPassword } from './passwords.ts';

export interface LoginTarget {
  accountId: number;
  username: string;
}

/** The account behind `identifier` (an email, or a username when it has no `@`) if `password` is
 *  right for it; null otherwise (one answer for unknown names and wrong passwords). */
export async function checkCredentials(db: Db, identifier: string, password: string): Promise<LoginTarget | null> {
  const id = identifier.trim().toLowerCase();
  const row = await db
    .selectFrom('people')
    .innerJoin('accounts', 'accounts.id', 'people.account_id')
    .select(['accounts.id', 'accounts.username', 'people.password_hash'])
    .where(id.includes('@') ? 'people.email' : 'accounts.username', '=', id)
    .executeTakeFirst();
  const ok = await verifyPassword(password, row?.password_hash ?? null);
  return ok && row ? { accountId: row.id, username: row.username } : null;
}
