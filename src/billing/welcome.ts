// The last step of a paid checkout: the buyer follows the mailed link (/_/welcome/<token>) and chooses
// a username and a password. The placeholder username (`pending--…`) is replaced, the password set, the
// email counted as confirmed (the link reached it) and the token used up, all in one transaction: a
// refused username leaves the link working.
import { useCheckoutToken } from '../store/billing.ts';
import { accountById, updateAccountRow, updatePersonRow, usernameTaken } from '../store/accounts.ts';
import type { Services } from '../services.ts';
import { sha256 } from '../core/checksum.ts';
import { badRequest, conflict, KilnError } from '../errors.ts';
import { usernameProblem } from '../core/names.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { hashPassword, passwordProblem } from '../accounts/passwords.ts';
import { findEmailToken } from '../accounts/email-tokens.ts';
import { isPendingUsername } from './stripe.ts';
import { inTransaction } from '../store/transaction.ts';

const WELCOME_LINK_GONE = 'This link has expired or was already used. If you already chose your username, sign in.';

export interface Welcome {
  accountId: number;
  email: string;
}

/** The pending purchase behind a welcome token, or a 400 saying the link is gone. */
export async function findWelcome(s: Services, token: string): Promise<Welcome> {
  const row = await findEmailToken(s, token, 'checkout');
  if (!row || row.account_id === null) throw new KilnError(400, WELCOME_LINK_GONE, 'invalid-token');
  const account = await accountById(s.database.db, row.account_id);
  if (!account || !isPendingUsername(account.username)) throw new KilnError(400, WELCOME_LINK_GONE, 'invalid-token');
  return { accountId: row.account_id, email: row.email };
}

/** Sets the username and password of a bought account. 400 naming the rule, 409 when the username is
 *  taken, 400 when the link is gone (used, expired, or the account already welcomed). */
export async function finishWelcome(
  s: Services,
  token: string,
  input: { username: string; password: string },
): Promise<{ accountId: number; username: string }> {
  const username = input.username.trim().toLowerCase();
  const problem = usernameProblem(username) ?? passwordProblem(input.password);
  if (problem) throw badRequest(problem, 'invalid');
  const welcome = await findWelcome(s, token);
  const { db } = s.database;
  if (await usernameTaken(db, username)) {
    throw conflict('That username is taken.', 'username-taken');
  }
  const passwordHash = await hashPassword(input.password);
  const now = s.clock.now().toISOString();
  try {
    await inTransaction(s, async (trx) => {
      if (!(await useCheckoutToken(trx, sha256(token), now)))
        throw new KilnError(400, WELCOME_LINK_GONE, 'invalid-token');
      const renamed = await updateAccountRow(trx, welcome.accountId, { username }, { usernameLike: 'pending--%' });
      if (!renamed) throw new KilnError(400, WELCOME_LINK_GONE, 'invalid-token');
      await updatePersonRow(trx, welcome.accountId, { password_hash: passwordHash, email_confirmed: 1 });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('That username is taken.', 'username-taken');
    throw err;
  }
  return { accountId: welcome.accountId, username };
}
