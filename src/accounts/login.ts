// Checking credentials. An unknown email or username costs the same scrypt work as a wrong password.
import type { Db } from '../store/schema.ts';
import type { Services } from '../services.ts';
import { tooMany, unauthorized } from '../errors.ts';
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

/** A password sign-in attempt: counted by the login limiter (client address + identifier; 429 beyond
 *  it), checked, and the counter reset on success. Throws 401 for wrong credentials. */
export async function passwordLogin(s: Services, ip: string, identifier: string, password: string): Promise<LoginTarget> {
  const key = `${ip}|${identifier.trim().toLowerCase()}`;
  const hit = await s.loginLimiter.hit(key);
  if (!hit.allowed) {
    const minutes = Math.ceil(hit.retryAfter / 60);
    throw tooMany(`Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, hit.retryAfter);
  }
  const who = await checkCredentials(s.database.db, identifier, password);
  if (!who) throw unauthorized('Wrong email or password.', 'bad-credentials');
  await s.loginLimiter.reset(key);
  return who;
}
