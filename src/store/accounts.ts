// The accounts store: account, person and team-membership rows, each function taking an executor (the
// database, or the transaction a write runs in). The rules about them live in src/accounts/ and src/teams/.
import { sql, type Kysely, type Updateable } from 'kysely';
import type { AccountsTable, DB, Db, PeopleTable, Plan, TeamRole } from './schema.ts';

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

export function accountNamed(
  db: Kysely<DB>,
  username: string,
): Promise<{ id: number; username: string; suspended_at: string | null } | undefined> {
  return db
    .selectFrom('accounts')
    .select(['id', 'username', 'suspended_at'])
    .where('username', '=', username)
    .executeTakeFirst();
}

/** A person's account id, username, email and type (a person's account joined to its person row). */
export function personRow(db: Kysely<DB>, ref: { id: number } | { username: string } | { email: string }) {
  // The account is found first, in a materialized CTE, so the join that follows has no bound value: SQLite
  // prepares a statement afresh every time values are bound into a join's plan (11 µs a read instead of 4).
  return db
    .with(
      (cte) => cte('ref').materialized(),
      (q) =>
        'id' in ref
          ? q.selectFrom('accounts').select('id').where('id', '=', ref.id)
          : 'username' in ref
            ? q.selectFrom('accounts').select('id').where('username', '=', ref.username.trim().toLowerCase())
            : q.selectFrom('people').select('account_id as id').where('email', '=', ref.email.trim().toLowerCase()),
    )
    .selectFrom('ref')
    .innerJoin('accounts', 'accounts.id', 'ref.id')
    .innerJoin('people', 'people.account_id', 'accounts.id')
    .select(PERSON_COLUMNS)
    .where('accounts.kind', '=', sql.lit('person'))
    .executeTakeFirst();
}

export type PersonRow = NonNullable<Awaited<ReturnType<typeof personRow>>>;

/** A person's row: the columns of their account and person rows. */
export const PERSON_COLUMNS = [
  'accounts.id',
  'accounts.username',
  'accounts.plan',
  'accounts.has_active_subscription',
  'accounts.plan_started_at',
  'accounts.stripe_customer_id',
  'people.email',
  'people.account_type',
  'people.signup_app_id',
  'people.is_superadmin',
  'people.email_confirmed',
  'people.password_hash',
  'accounts.suspended_at',
] as const;

/** True when some account (person or team) has this username, or it is held back (a deleted account's,
 *  or a renamed one's old name), except a hold for `forAccount`: a renamed account may take its own old
 *  name back. */
export async function usernameTaken(db: Kysely<DB>, username: string, forAccount?: number): Promise<boolean> {
  if (await db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirst()) return true;
  let held = db
    .selectFrom('held_usernames')
    .select('username')
    .where('username', '=', username)
    .where('held_until', '>', new Date().toISOString());
  if (forAccount !== undefined)
    held = held.where((eb) => eb.or([eb('account_id', 'is', null), eb('account_id', '!=', forAccount)]));
  return !!(await held.executeTakeFirst());
}

/** A team account by username or id. */
export function teamRow(db: Kysely<DB>, ref: string | number) {
  let q = db
    .selectFrom('accounts')
    .select(['id', 'username', 'plan', 'has_active_subscription'])
    .where('kind', '=', 'team');
  q = typeof ref === 'number' ? q.where('id', '=', ref) : q.where('username', '=', String(ref).toLowerCase());
  return q.executeTakeFirst();
}

/** The teams a person belongs to, with the role, by team name. */
export function membershipsOf(db: Kysely<DB>, personId: number) {
  return db
    .selectFrom('team_memberships')
    .innerJoin('accounts', 'accounts.id', 'team_memberships.team_id')
    .select([
      'accounts.id',
      'accounts.username',
      'accounts.plan',
      'accounts.has_active_subscription',
      'team_memberships.role',
    ])
    .where('team_memberships.person_id', '=', personId)
    .where('accounts.kind', '=', 'team')
    .orderBy('accounts.username')
    .execute();
}

/** A team's members: id, username, email and role. */
export function membersRows(db: Kysely<DB>, teamId: number) {
  return db
    .selectFrom('team_memberships')
    .innerJoin('accounts', 'accounts.id', 'team_memberships.person_id')
    .innerJoin('people', 'people.account_id', 'team_memberships.person_id')
    .select(['accounts.id', 'accounts.username', 'people.email', 'team_memberships.role'])
    .where('team_memberships.team_id', '=', teamId)
    .execute();
}

/** Adds a member, or sets the role of one. */
export async function setMembership(
  db: Kysely<DB>,
  m: { teamId: number; personId: number; role: TeamRole; now: string; exists: boolean },
): Promise<void> {
  if (m.exists)
    await db
      .updateTable('team_memberships')
      .set({ role: m.role })
      .where('team_id', '=', m.teamId)
      .where('person_id', '=', m.personId)
      .execute();
  else
    await db
      .insertInto('team_memberships')
      .values({ team_id: m.teamId, person_id: m.personId, role: m.role, created_at: m.now })
      .execute();
}

export async function deleteMembership(db: Kysely<DB>, teamId: number, personId: number): Promise<void> {
  await db.deleteFrom('team_memberships').where('team_id', '=', teamId).where('person_id', '=', personId).execute();
}

/** An owner of the team other than `personId`, if any. */
export function otherOwner(db: Kysely<DB>, teamId: number, personId: number) {
  return db
    .selectFrom('team_memberships')
    .select('person_id')
    .where('team_id', '=', teamId)
    .where('role', '=', 'owner')
    .where('person_id', '!=', personId)
    .executeTakeFirst();
}

/** Changes an account row (`usernameLike`: only while its username matches); true when it did. */
export async function updateAccountRow(
  db: Kysely<DB>,
  id: number,
  set: Updateable<AccountsTable>,
  when: { usernameLike?: string } = {},
): Promise<boolean> {
  let q = db.updateTable('accounts').set(set).where('id', '=', id);
  if (when.usernameLike !== undefined) q = q.where('username', 'like', when.usernameLike);
  return Number((await q.executeTakeFirst()).numUpdatedRows) === 1;
}

/** Changes a person row (by its account id; `email`: only while the person still has that address);
 *  true when it did. */
export async function updatePersonRow(
  db: Kysely<DB>,
  accountId: number,
  set: Updateable<PeopleTable>,
  when: { email?: string } = {},
): Promise<boolean> {
  let q = db.updateTable('people').set(set).where('account_id', '=', accountId);
  if (when.email !== undefined) q = q.where('email', '=', when.email);
  return Number((await q.executeTakeFirst()).numUpdatedRows) === 1;
}

/** An app user who signed up on this app, by email. */
export function appUserByEmail(db: Kysely<DB>, email: string, appId: number) {
  return db
    .selectFrom('people')
    .select(['account_id', 'email', 'password_hash'])
    .where('email', '=', email)
    .where('account_type', '=', 'app_user')
    .where('signup_app_id', '=', appId)
    .executeTakeFirst();
}

/** The person a confirmation token (used or not) was for, while they still have its address: their
 *  account id and whether their email is confirmed. */
export function confirmTokenPerson(db: Db, tokenHash: string) {
  return db
    .selectFrom('email_tokens')
    .innerJoin('people', 'people.account_id', 'email_tokens.account_id')
    .select(['people.account_id', 'people.email_confirmed'])
    .where('email_tokens.token_hash', '=', tokenHash)
    .where('email_tokens.purpose', '=', 'confirm')
    .whereRef('people.email', '=', 'email_tokens.email')
    .executeTakeFirst();
}

/** An account row by id (any kind). */
export function accountById(db: Kysely<DB>, id: number) {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account a Stripe subscription or customer belongs to. */
export function accountByStripe(db: Kysely<DB>, ref: { subscriptionId: string } | { customerId: string }) {
  const q = db.selectFrom('accounts').selectAll();
  return (
    'subscriptionId' in ref
      ? q.where('stripe_subscription_id', '=', ref.subscriptionId)
      : q.where('stripe_customer_id', '=', ref.customerId)
  ).executeTakeFirst();
}

/** The plan fields of an account (person or team; `is_superadmin` null for a team). */
export function planRow(db: Kysely<DB>, accountId: number) {
  return db
    .selectFrom('accounts')
    .leftJoin('people', 'people.account_id', 'accounts.id')
    .select(['accounts.plan', 'accounts.has_active_subscription', 'accounts.plan_started_at', 'people.is_superadmin'])
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
}

/** Whether the person has one of `roles` in a team with an active paid plan. */
export async function inPaidTeamAs(db: Kysely<DB>, personId: number, roles: readonly TeamRole[]): Promise<boolean> {
  const team = await db
    .selectFrom('team_memberships')
    .innerJoin('accounts', 'accounts.id', 'team_memberships.team_id')
    .select('accounts.id')
    .where('team_memberships.person_id', '=', personId)
    .where('team_memberships.role', 'in', roles)
    .where('accounts.has_active_subscription', '=', 1)
    .where('accounts.plan', '!=', 'free')
    .executeTakeFirst();
  return !!team;
}

/** True when a person has this email. */
export async function emailTaken(db: Kysely<DB>, email: string): Promise<boolean> {
  return !!(await db.selectFrom('people').select('account_id').where('email', '=', email).executeTakeFirst());
}

/** How many accounts (people and teams) exist. */
export async function countAccountRows(db: Kysely<DB>): Promise<number> {
  const r = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Holds a username back until `until`: a deleted account's (no `moved`), or the old name of an account
 *  renamed to `moved.to`, which leads there meanwhile and which that account may take back. */
export async function holdUsername(
  db: Kysely<DB>,
  username: string,
  until: string,
  moved?: { to: string; accountId: number },
): Promise<void> {
  await db.deleteFrom('held_usernames').where('username', '=', username).execute();
  await db
    .insertInto('held_usernames')
    .values({ username, held_until: until, moved_to: moved?.to ?? null, account_id: moved?.accountId ?? null })
    .execute();
}

/** An account takes a name of its own back: the name's hold for it ends (its host serves again), and
 *  every other name it left leads straight to the new one. */
export async function reclaimUsername(db: Kysely<DB>, accountId: number, username: string): Promise<void> {
  await db.deleteFrom('held_usernames').where('username', '=', username).where('account_id', '=', accountId).execute();
  await db
    .updateTable('held_usernames')
    .set({ moved_to: username })
    .where('account_id', '=', accountId)
    .where('moved_to', 'is not', null)
    .execute();
}

/** The username a held one moved to (while it is held), or undefined. */
export async function movedUsername(db: Kysely<DB>, username: string, now: string): Promise<string | undefined> {
  const r = await db
    .selectFrom('held_usernames')
    .select('moved_to')
    .where('username', '=', username)
    .where('held_until', '>', now)
    .executeTakeFirst();
  return r?.moved_to ?? undefined;
}

/** Deletes an account row; everything that names it goes with it (foreign keys cascade). */
export async function deleteAccountRow(db: Kysely<DB>, accountId: number): Promise<void> {
  await db.deleteFrom('accounts').where('id', '=', accountId).execute();
}

/** Teams of which the person is the only owner. */
export function soleOwnedTeams(db: Kysely<DB>, personId: number) {
  return db
    .selectFrom('team_memberships as m')
    .innerJoin('accounts', 'accounts.id', 'm.team_id')
    .select(['accounts.id', 'accounts.username'])
    .where('m.person_id', '=', personId)
    .where('m.role', '=', 'owner')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('team_memberships as o')
            .select('o.person_id')
            .whereRef('o.team_id', '=', 'm.team_id')
            .where('o.role', '=', 'owner')
            .whereRef('o.person_id', '!=', 'm.person_id'),
        ),
      ),
    )
    .execute();
}

export async function superadminCount(db: Kysely<DB>): Promise<number> {
  const r = await db
    .selectFrom('people')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('is_superadmin', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Accounts as the administrator lists them, newest first, with what they hold and when they were
 *  last signed in; `q` matches a username or an email. */
export function adminAccounts(db: Kysely<DB>, q: string, limit: number, offset: number) {
  let query = db
    .selectFrom('accounts')
    .leftJoin('people', 'people.account_id', 'accounts.id')
    .select((eb) => [
      'accounts.id',
      'accounts.username',
      'accounts.kind',
      'accounts.plan',
      'accounts.has_active_subscription',
      'accounts.created_at',
      'accounts.suspended_at',
      'people.email',
      'people.account_type',
      'people.is_superadmin',
      'people.email_confirmed',
      eb
        .selectFrom('nodes')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('nodes.owner_id', '=', 'accounts.id')
        .where('nodes.type', '=', 'site')
        .where('nodes.trashed_at', 'is', null)
        .as('documents'),
      eb
        .selectFrom('nodes')
        .select((e) => e.fn.sum<number>('nodes.size').as('s'))
        .whereRef('nodes.owner_id', '=', 'accounts.id')
        .where('nodes.trashed_at', 'is', null)
        .as('storage'),
      eb
        .selectFrom('sessions')
        .select((e) => e.fn.max('sessions.created_at').as('m'))
        .whereRef('sessions.account_id', '=', 'accounts.id')
        .as('last_active'),
    ]);
  const needle = q.trim().toLowerCase();
  if (needle)
    query = query.where((eb) =>
      eb.or([eb('accounts.username', 'like', `%${needle}%`), eb('people.email', 'like', `%${needle}%`)]),
    );
  return query.orderBy('accounts.id', 'desc').limit(limit).offset(offset).execute();
}

/** How many accounts match `q` (for paging). */
export async function adminAccountCount(db: Kysely<DB>, q: string): Promise<number> {
  let query = db
    .selectFrom('accounts')
    .leftJoin('people', 'people.account_id', 'accounts.id')
    .select((eb) => eb.fn.countAll<number>().as('n'));
  const needle = q.trim().toLowerCase();
  if (needle)
    query = query.where((eb) =>
      eb.or([eb('accounts.username', 'like', `%${needle}%`), eb('people.email', 'like', `%${needle}%`)]),
    );
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** The ids of an account's sync keys (their streams end when it is suspended). */
export async function keyIdsOf(db: Kysely<DB>, accountId: number): Promise<number[]> {
  return (await db.selectFrom('sync_keys').select('id').where('account_id', '=', accountId).execute()).map((r) => r.id);
}

/** The people who signed up on an app, newest first, with their copy of it. */
export function appUsersOf(db: Kysely<DB>, appId: number) {
  return db
    .selectFrom('people')
    .innerJoin('accounts', 'accounts.id', 'people.account_id')
    .select((eb) => [
      'accounts.id',
      'accounts.username',
      'accounts.created_at',
      'accounts.suspended_at',
      'people.email',
      'people.email_confirmed',
      eb
        .selectFrom('nodes')
        .select('nodes.name')
        .whereRef('nodes.owner_id', '=', 'accounts.id')
        .where('nodes.source_node_id', '=', appId)
        .where('nodes.trashed_at', 'is', null)
        .limit(1)
        .as('instance'),
    ])
    .where('people.signup_app_id', '=', appId)
    .where('people.account_type', '=', 'app_user')
    .orderBy('accounts.id', 'desc')
    .limit(1000)
    .execute();
}
