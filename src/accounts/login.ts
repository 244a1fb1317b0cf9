// Checking credentials. An unknown email or username costs the same scrypt work as a wrong password.
import { personRow } from '../store/accounts.ts';
import type { Db } from '../store/schema.ts';
import type { Services } from '../services.ts';
import { forbidden, tooMany, unauthorized } from '../errors.ts';
import { verifyPassword } from './passwords.ts';

export interface LoginTarget {
  accountId: number;
  username: string;
}

interface LoginRow {
  id: number;
  username: string;
  password_hash: string | null;
  suspended_at: string | null;
}

/** The account an identifier names: an email, or a username when it has no `@`. */
async function findLoginRow(db: Db, identifier: string): Promise<LoginRow | undefined> {
  const id = identifier.trim().toLowerCase();
  return personRow(db, id.includes('@') ? { email: id } : { username: id });
}

/** True when `password` is right for the row; an unknown row costs the same scrypt work. */
async function passwordMatches(row: LoginRow | undefined, password: string): Promise<boolean> {
  const ok = await verifyPassword(password, row?.password_hash ?? null);
  return ok && row !== undefined;
}

/** The login limiter's key: the client address plus the account the identifier names (so its email
 *  and its username share one count), or the normalized identifier when it names no account. */
function loginLimiterKey(ip: string, identifier: string, accountId: number | undefined): string {
  return accountId !== undefined ? `${ip}|account:${accountId}` : `${ip}|id:${identifier.trim().toLowerCase()}`;
}

/** A password sign-in attempt: counted by the login limiter (client address + account; 429 beyond
 *  it), checked, and the counter reset on success. Throws 401 for wrong credentials. */
export async function passwordLogin(
  s: Services,
  ip: string,
  identifier: string,
  password: string,
): Promise<LoginTarget> {
  const row = await findLoginRow(s.database.db, identifier);
  const key = loginLimiterKey(ip, identifier, row?.id);
  const hit = await s.loginLimiter.hit(key);
  if (!hit.allowed) {
    const minutes = Math.ceil(hit.retryAfter / 60);
    throw tooMany(
      `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      hit.retryAfter,
    );
  }
  if (!(await passwordMatches(row, password)) || !row)
    throw unauthorized('Wrong email or password.', 'bad-credentials');
  await s.loginLimiter.reset(key);
  // Said only to whoever knows the password.
  if (row.suspended_at !== null)
    throw forbidden('This account is suspended. Ask the administrator of this Kiln.', 'account-suspended');
  return { accountId: row.id, username: row.username };
}
