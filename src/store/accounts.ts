// The accounts store: account, person and team-membership rows, each function taking an executor (the
// database, or the transaction a write runs in). The rules about them live in src/accounts/ and src/teams/.
import type { Kysely } from 'kysely';
import type { DB, Plan, TeamRole } from './schema.ts';

/** A person's role in a team, or undefined when they are not a member. */
export async function teamRole(db: Kysely<DB>, teamId: number, personId: number): Promise<TeamRole | undefined> {
  const row = await db
    .selectFrom('team_memberships')
    .select('role')
    .where('team_id', '=', teamId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row?.role;
}

export interface NewAccountRow {
  kind: 'person' | 'team';
  username: string;
  plan: Plan;
  /** A paid plan starts now, with an active subscription. */
  paid: boolean;
  now: string;
  stripe?: { customerId: string | null; subscriptionId: string | null };
}

/** The one way an account row (a person's or a team's) is made; returns its id. */
export async function insertAccount(trx: Kysely<DB>, a: NewAccountRow): Promise<number> {
  const row = await trx
    .insertInto('accounts')
    .values({
      kind: a.kind,
      username: a.username,
      plan: a.plan,
      has_active_subscription: a.paid ? 1 : 0,
      plan_started_at: a.paid ? a.now : null,
      created_at: a.now,
      ...(a.stripe ? { stripe_customer_id: a.stripe.customerId, stripe_subscription_id: a.stripe.subscriptionId } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The person row of an account (a password hash, or null until one is chosen). */
export async function insertPersonRow(
  trx: Kysely<DB>,
  accountId: number,
  p: {
    email: string;
    passwordHash: string | null;
    accountType?: 'dev' | 'app_user';
    isSuperadmin?: boolean;
    emailConfirmed?: boolean;
    signupAppId?: number | null;
  },
): Promise<void> {
  await trx
    .insertInto('people')
    .values({
      account_id: accountId,
      email: p.email,
      password_hash: p.passwordHash,
      account_type: p.accountType ?? 'dev',
      is_superadmin: p.isSuperadmin ? 1 : 0,
      email_confirmed: p.emailConfirmed ? 1 : 0,
      signup_app_id: p.signupAppId ?? null,
    })
    .execute();
}

/** Username, account type and signup app of a person. */
export function personFacts(
  db: Kysely<DB>,
  accountId: number,
): Promise<{ username: string; accountType: string; signupAppId: number | null } | undefined> {
  return db
    .selectFrom('people')
    .innerJoin('accounts', 'accounts.id', 'people.account_id')
    .select(['accounts.username', 'people.account_type as accountType', 'people.signup_app_id as signupAppId'])
    .where('people.account_id', '=', accountId)
    .executeTakeFirst();
}

export async function usernameOf(db: Kysely<DB>, accountId: number): Promise<string> {
  const row = await db.selectFrom('accounts').select('username').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.username;
}

export function accountNamed(db: Kysely<DB>, username: string): Promise<{ id: number; username: string } | undefined> {
  return db.selectFrom('accounts').select(['id', 'username']).where('username', '=', username).executeTakeFirst();
}
