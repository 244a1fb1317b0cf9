// Team accounts: an account row of kind 'team' (its username is its document host, like a person's)
// with members in `team_memberships`, each an owner, editor or viewer. Owners and editors manage the
// team's files (src/nodes/tree.ts checks that); owners also manage the members. Viewers can see that
// the team exists and nothing more through the sync API. Removing a member or making them a viewer
// closes their open team sync streams (grant `member:<team>:<person>`, src/events/revocations.ts).
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import type { StreamHub } from '../sse/hub.ts';
import type { EventBus } from '../events/bus.ts';
import type { Caller } from '../access/caller.ts';
import type { Nodes } from '../nodes/open.ts';
import type { Plan, TeamRole } from '../store/schema.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { usernameProblem } from '../core/names.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { PLANS } from '../accounts/people.ts';
import { grants, revokeGrants, roleChanged } from '../events/revocations.ts';
import {
  deleteMembership,
  insertAccount,
  membersRows,
  membershipsOf,
  otherOwner,
  personRow,
  setMembership,
  teamRole,
  teamRow,
  usernameTaken,
} from '../store/accounts.ts';
import { allowsTeam, authorizeTeam } from '../access/authorize.ts';
import { isSystem } from '../access/caller.ts';
import { inTransaction } from '../store/transaction.ts';

/** What teams use of the services, part by part (the bus reaches this file through sync keys, so it does not import
 *  src/services.ts): revoking a member's grants takes the hub and the event bus. */
export interface TeamPorts {
  database: Database;
  clock: Clock;
  hub: StreamHub;
  events: EventBus;
}

export const TEAM_ROLES: TeamRole[] = ['owner', 'editor', 'viewer'];

export interface Team {
  id: number;
  username: string;
  plan: Plan;
  hasActiveSubscription: boolean;
}

export interface TeamMember {
  personId: number;
  username: string;
  email: string;
  role: TeamRole;
}

/** A team as one of its member's teams: the team and the member's role in it. */
export interface Membership extends Team {
  role: TeamRole;
}

/** True when the plan includes syncing: an active subscription on a paid plan. */
export function planIncludesSync(account: {
  plan: Plan;
  has_active_subscription?: number;
  hasActiveSubscription?: boolean;
}): boolean {
  const active = account.hasActiveSubscription ?? account.has_active_subscription === 1;
  return active && account.plan !== 'free';
}

/** Creates a team account with `ownerId` as its first owner. The username follows the rules of
 *  people's usernames (it becomes the team's document host) and is unique across people and teams. */
export async function createTeam(
  s: TeamPorts,
  input: { username: string; ownerId: number; plan?: Plan },
): Promise<Team> {
  const username = String(input.username ?? '')
    .trim()
    .toLowerCase();
  const problem = usernameProblem(username);
  if (problem) throw badRequest(problem.replace(/^Username/, 'Team name'), 'invalid');
  const plan = input.plan ?? 'free';
  if (!PLANS.includes(plan)) throw badRequest(`Plan must be one of ${PLANS.join(', ')}.`, 'invalid');
  const { db } = s.database;
  const owner = await personRow(db, { id: input.ownerId });
  if (!owner) throw notFound('No such person.');
  if (owner.account_type !== 'dev') throw badRequest('Only developer accounts can own teams.', 'not-developer');
  if (await usernameTaken(db, username)) throw conflict(`The name "${username}" is taken.`, 'username-taken');
  const now = s.clock.now().toISOString();
  const paid = plan !== 'free';
  try {
    return await inTransaction(s, async (trx) => {
      const teamId = await insertAccount(trx, { kind: 'team', username, plan, paid, now });
      await setMembership(trx, { teamId, personId: input.ownerId, role: 'owner', now, exists: false });
      return { id: teamId, username, plan, hasActiveSubscription: paid };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`The name "${username}" is taken.`, 'username-taken');
    throw err;
  }
}

/** The team with this username (or id), or undefined. */
export async function findTeam(s: Pick<TeamPorts, 'database'>, ref: string | number): Promise<Team | undefined> {
  const row = await teamRow(s.database.db, ref);
  return row
    ? { id: row.id, username: row.username, plan: row.plan, hasActiveSubscription: row.has_active_subscription === 1 }
    : undefined;
}

/** The person's role in the team, or undefined when they are not a member. */
export function roleIn(s: TeamPorts, teamId: number, personId: number): Promise<TeamRole | undefined> {
  return teamRole(s.database.db, teamId, personId);
}

/** Every team the person belongs to, with their role, by team name. */
export async function teamsOf(s: Pick<TeamPorts, 'database'>, personId: number): Promise<Membership[]> {
  const rows = await membershipsOf(s.database.db, personId);
  return rows.map((r) => ({
    id: r.id,
    username: r.username,
    plan: r.plan,
    hasActiveSubscription: r.has_active_subscription === 1,
    role: r.role,
  }));
}

/** The caller's teams, each with its members where the caller's role may change them (else null), and
 *  whether the caller may change the team's files (`manages`). */
export async function teamsView(ctx: Pick<TeamCtx, 'caller' | 'database'>) {
  const me = ctx.caller.actor;
  const teams = me ? await teamsOf(ctx, me.accountId) : [];
  return Promise.all(
    teams.map(async (t) => ({
      ...t,
      members: allowsTeam(t.role, 'members') ? await membersOf(ctx, t.id) : null,
    })),
  );
}

/** Whether a member with this role changes the team's files (its dashboard tree), by the table. */
export const managesFiles = (role: TeamRole) => allowsTeam(role, 'manage');

/** The members of a team, owners first. */
export async function membersOf(s: Pick<TeamPorts, 'database'>, teamId: number): Promise<TeamMember[]> {
  const rows = await membersRows(s.database.db, teamId);
  const order: Record<TeamRole, number> = { owner: 0, editor: 1, viewer: 2 };
  return rows
    .map((r) => ({ personId: r.id, username: r.username, email: r.email, role: r.role }))
    .sort((a, b) => order[a.role] - order[b.role] || a.username.localeCompare(b.username));
}

/** Who acts on a team (a request's ctx is one): the caller, and its role in a team as the table reads it. */
export interface TeamCtx {
  caller: Caller;
  nodes: Pick<Nodes, 'roleIn'>;
  database: Database;
}

/** The team whose members the caller may change: the table's `members` on the caller's role there (its
 *  owners; an editor or viewer 403 `not-team-owner`); 404 when there is no such team or the caller is no
 *  member at all (a team's existence is not revealed to strangers). Kiln itself (the shell) may. */
export async function teamToChange(ctx: TeamCtx, teamId: number): Promise<Team> {
  const team = await findTeam(ctx, teamId);
  if (!team) throw notFound('No such team.');
  if (isSystem(ctx.caller)) return team;
  const role = await ctx.nodes.roleIn(team.id);
  if (!role) throw notFound('No such team.');
  authorizeTeam(role, 'members', () =>
    forbidden('Only the owners of a team can change its members.', 'not-team-owner'),
  );
  return team;
}

type MemberInput = { teamId: number; username: string; role: TeamRole };

/** Adds a person to the team with a role, or changes the role of a member. The last owner cannot
 *  step down (a team always has an owner). */
export async function setMember(s: TeamPorts & TeamCtx, input: MemberInput): Promise<TeamMember> {
  if (!TEAM_ROLES.includes(input.role))
    throw badRequest(`Role must be one of ${TEAM_ROLES.join(', ')}.`, 'invalid-role');
  await teamToChange(s, input.teamId);
  const { db } = s.database;
  const person = await personRow(db, { username: String(input.username ?? '') });
  if (!person) throw notFound(`There is no person named "${input.username}".`);
  if (person.account_type !== 'dev') throw badRequest('Only developer accounts can be team members.', 'not-developer');
  const now = s.clock.now().toISOString();
  let demoted = false;
  let changed = false;
  await inTransaction(s, async (trx) => {
    const current = await teamRole(trx, input.teamId, person.id);
    if (current === 'owner' && input.role !== 'owner') await assertAnotherOwner(trx, input.teamId, person.id);
    await setMembership(trx, { teamId: input.teamId, personId: person.id, role: input.role, now, exists: !!current });
    demoted = !!current && allowsTeam(current, 'sync') && !allowsTeam(input.role, 'sync');
    changed = !!current && current !== input.role;
  });
  // A viewer may not sync the team's files: the person's open team sync streams close.
  if (demoted) await revokeGrants(s, [grants.member(input.teamId, person.id)]);
  // Any other change of role: what processes keep of the person's page views on the team's host goes.
  else if (changed) await roleChanged(s, input.teamId, person.id);
  return { personId: person.id, username: person.username, email: person.email, role: input.role };
}

/** Removes a member; the last owner stays. */
export async function removeMember(
  s: TeamPorts & TeamCtx,
  { teamId, personId }: { teamId: number; personId: number },
): Promise<void> {
  await teamToChange(s, teamId);
  await inTransaction(s, async (trx) => {
    const current = await teamRole(trx, teamId, personId);
    if (!current) throw notFound('That person is not a member of this team.');
    if (current === 'owner') await assertAnotherOwner(trx, teamId, personId);
    await deleteMembership(trx, teamId, personId);
  });
  await revokeGrants(s, [grants.member(teamId, personId)]);
}

async function assertAnotherOwner(trx: Database['db'], teamId: number, personId: number) {
  if (!(await otherOwner(trx, teamId, personId)))
    throw conflict('A team needs at least one owner; make someone else an owner first.', 'last-owner');
}
