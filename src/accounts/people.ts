// Creating people: one account row (the username/host) and one person row, in one transaction.
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import type { EventBus } from '../events/bus.ts';
import type { AccountType, Executor, Plan, Tx } from '../store/schema.ts';
import { badRequest, conflict } from '../errors.ts';
import { emailProblem, usernameProblem } from '../core/names.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import * as accounts from '../store/accounts.ts';
import { insertAccount, insertPersonRow } from '../store/accounts.ts';
import { inTransaction } from '../store/transaction.ts';

/** What finding and creating people use of the services, part by part (the bus reaches this file through sync
 *  keys and teams, so it does not import src/services.ts). */
export interface PeoplePorts {
  database: Database;
  clock: Clock;
  events: EventBus;
}

export interface NewPerson {
  email: string;
  username: string;
  password: string;
  plan?: Plan;
  accountType?: AccountType;
  isSuperadmin?: boolean;
  emailConfirmed?: boolean;
  signupAppId?: number | null;
}

export interface CreatedPerson {
  id: number;
  email: string;
  username: string;
  plan: Plan;
}

export const PLANS: Plan[] = ['free', 'personal', 'maker'];

/** Normalizes and validates the input; throws 400 naming the rule that fails. */
function validated(input: NewPerson) {
  const email = String(input.email ?? '')
    .trim()
    .toLowerCase();
  const username = String(input.username ?? '')
    .trim()
    .toLowerCase();
  const plan = input.plan ?? 'free';
  const problem =
    emailProblem(email) ??
    usernameProblem(username) ??
    passwordProblem(String(input.password ?? '')) ??
    (PLANS.includes(plan) ? null : `Plan must be one of ${PLANS.join(', ')}.`);
  if (problem) throw badRequest(problem, 'invalid');
  return { email, username, plan };
}

async function refuseTaken(trx: Executor, email: string, username: string) {
  if (await accounts.usernameTaken(trx, username)) throw conflict('That username is taken.', 'username-taken');
  if (await accounts.emailTaken(trx, email))
    throw conflict('An account with that email already exists.', 'email-taken');
}

/** A unique violation raced past the checks: name the field it was about. */
function takenConflict(err: unknown): never {
  if (isUniqueViolation(err)) {
    const message = String((err as Error).message ?? '') + String((err as { constraint?: string }).constraint ?? '');
    if (message.includes('email')) throw conflict('An account with that email already exists.', 'email-taken');
    throw conflict('That username is taken.', 'username-taken');
  }
  throw err;
}

async function insertPerson(
  s: PeoplePorts,
  trx: Tx,
  v: { email: string; username: string; plan: Plan },
  input: NewPerson,
  passwordHash: string,
): Promise<number> {
  const now = s.clock.now().toISOString();
  const id = await insertAccount(trx, {
    kind: 'person',
    username: v.username,
    plan: v.plan,
    paid: v.plan !== 'free',
    now,
  });
  await insertPersonRow(trx, id, {
    email: v.email,
    passwordHash,
    accountType: input.accountType,
    isSuperadmin: input.isSuperadmin,
    emailConfirmed: input.emailConfirmed,
    signupAppId: input.signupAppId,
  });
  return id;
}

/** Creates a person. 400 for invalid input (the message names the rule), 409 when the email or username is taken. */
export async function createPerson(
  s: PeoplePorts,
  input: NewPerson,
  /** Runs in the account's transaction, before its insert (a sign-up's invitation is used up there: of
   *  several sign-ups with one link, one makes an account). */
  first?: (trx: Tx) => Promise<void>,
): Promise<CreatedPerson> {
  const v = validated(input);
  const { db } = s.database;
  await refuseTaken(db, v.email, v.username);
  const passwordHash = await hashPassword(input.password);
  try {
    const id = await inTransaction(s, async (trx) => {
      await first?.(trx);
      return insertPerson(s, trx, v, input, passwordHash);
    });
    return { id, ...v };
  } catch (err) {
    takenConflict(err);
  }
}

export const SETUP_DONE_MSG = 'Kiln is already set up; sign in instead.';

/** First-run setup: creates the first superadmin (plan maker, email confirmed), only while no account
 *  exists. Race-safe: the emptiness check and the insert happen in one transaction that, on PostgreSQL,
 *  holds a lock on `accounts` that concurrent inserts wait for (SQLite runs transactions one at a time). */
export async function createFirstSuperadmin(
  s: PeoplePorts,
  input: Pick<NewPerson, 'email' | 'username' | 'password'>,
): Promise<CreatedPerson> {
  const full: NewPerson = { ...input, plan: 'maker', accountType: 'dev', isSuperadmin: true, emailConfirmed: true };
  const v = validated(full);
  if ((await countAccounts(s)) > 0) throw conflict(SETUP_DONE_MSG, 'already-set-up');
  const passwordHash = await hashPassword(input.password);
  try {
    const id = await inTransaction(s, async (trx) => {
      await s.database.lock.table(trx, 'accounts');
      if ((await accounts.countAccountRows(trx)) > 0) throw conflict(SETUP_DONE_MSG, 'already-set-up');
      return insertPerson(s, trx, v, full, passwordHash);
    });
    return { id, ...v };
  } catch (err) {
    // SQLite across processes: a concurrent writer makes ours fail with BUSY; it is the same refusal.
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw conflict(SETUP_DONE_MSG, 'already-set-up');
    takenConflict(err);
  }
}

/** People and teams: while this is 0 the instance needs first-run setup. */
export async function countAccounts(s: PeoplePorts): Promise<number> {
  return accounts.countAccountRows(s.database.db);
}

/** What the app pages need to know of a person: username, account type and the app they signed up on. */
export function personFacts(s: PeoplePorts, accountId: number) {
  return accounts.personFacts(s.database.db, accountId);
}

/** An account's username (accounts of people and teams alike). */
export function usernameOf(s: PeoplePorts, accountId: number): Promise<string> {
  return accounts.usernameOf(s.database.db, accountId);
}

/** The account (person or team) with this username. */
export function accountNamed(s: PeoplePorts, username: string) {
  return accounts.accountNamed(s.database.db, username);
}
