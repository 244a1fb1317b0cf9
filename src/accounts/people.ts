// Creating people: one account row (the username/host) and one person row, in one transaction.
import type { Services } from '../services.ts';
import type { AccountType, Plan } from '../store/schema.ts';
import { badRequest, conflict } from '../errors.ts';
import { emailProblem, usernameProblem } from '../core/names.ts';
import { hashPassword, passwordProblem } from './passwords.ts';

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

const PLANS: Plan[] = ['free', 'personal', 'maker'];

export async function createPerson(s: Services, input: NewPerson) {
  const email = input.email.trim().toLowerCase();
  const username = input.username.trim().toLowerCase();
  const plan = input.plan ?? 'free';
  const problem =
    emailProblem(email) ??
    usernameProblem(username) ??
    passwordProblem(input.password) ??
    (PLANS.includes(plan) ? null : `Plan must be one of ${PLANS.join(', ')}.`);
  if (problem) throw badRequest(problem, 'invalid');
  const { db } = s.database;
  const taken = await db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirst();
  if (taken) throw conflict('That username is taken.', 'username-taken');
  const emailTaken = await db.selectFrom('people').select('account_id').where('email', '=', email).executeTakeFirst();
  if (emailTaken) throw conflict('An account with that email already exists.', 'email-taken');

  const passwordHash = await hashPassword(input.password);
  const now = s.clock.now().toISOString();
  const paid = plan !== 'free';
  const id = await db.transaction().execute(async (trx) => {
    const account = await trx
      .insertInto('accounts')
      .values({ kind: 'person', username, plan, has_active_subscription: paid ? 1 : 0, plan_started_at: paid ? now : null, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('people')
      .values({
        account_id: account.id,
        email,
        password_hash: passwordHash,
        account_type: input.accountType ?? 'dev',
        is_superadmin: input.isSuperadmin ? 1 : 0,
        email_confirmed: input.emailConfirmed ? 1 : 0,
        signup_app_id: input.signupAppId ?? null,
      })
      .execute();
    return account.id;
  });
  return { id, email, username, plan };
}

export async function countPeople(s: Services): Promise<number> {
  const r = await s.database.db.selectFrom('people').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}
