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
  account_type: string;
  signup_app_id: number | null;
}

/** Who a sign-in may be: anyone (the main app), or only the app users of one app (that app's host,
 *  where its owner's scripts run and could read what is typed: nobody else's password is checked there). */
export type LoginScope = { kind: 'any' } | { kind: 'app'; appId: number };

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

/** True when the scope lets this account sign in. */
function inScope(row: LoginRow, scope: LoginScope): boolean {
  return scope.kind === 'any' || (row.account_type === 'app_user' && row.signup_app_id === scope.appId);
}

/** The login limiter's key: the client address plus the account the identifier names (so its email
 *  and its username share one count), or the normalized identifier when it names no account of the
 *  scope. On an app's host an identifier outside the scope counts in a bucket of that app's own, so
 *  the count a developer's sign-ins left on the main app cannot tell a developer from nobody. */
function loginLimiterKey(ip: string, identifier: string, accountId: number | undefined, scope: LoginScope): string {
  if (accountId !== undefined) return `${ip}|account:${accountId}`;
  const id = identifier.trim().toLowerCase();
  return scope.kind === 'app' ? `${ip}|app:${scope.appId}|id:${id}` : `${ip}|id:${id}`;
}

/** A password sign-in attempt: counted by the login limiter (client address + account; 429 beyond
 *  it), checked, and the counter reset on success. Throws 401 for wrong credentials. An account
 *  outside `scope` is treated as unknown: its password is never checked (the same scrypt work is
 *  done against nothing) and the answer is the unknown identifier's. */
export async function passwordLogin(
  s: Services,
  ip: string,
  identifier: string,
  password: string,
  scope: LoginScope = { kind: 'any' },
): Promise<LoginTarget> {
  const found = await findLoginRow(s.database.db, identifier);
  const row = found && inScope(found, scope) ? found : undefined;
  const key = loginLimiterKey(ip, identifier, row?.id, scope);
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
