// Whose tree a caller changes, and who the caller is on the dashboard's pages. The tree is the one access
// question the node table cannot ask of a node (its top level is no node): the caller's own account, or a
// team where the table's `team` rows let its role `manage` (a viewer gets 403 `viewer`, anyone else the
// team is hidden from: 404). Every other question is a node's, asked through `ctx.nodes.open`.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan } from '../store/schema.ts';
import { notFound } from '../errors.ts';
import { authorizeActor, authorizeTeamChange } from '../access/authorize.ts';
import { isSystem } from '../access/caller.ts';
import { accountById, teamRow } from '../store/accounts.ts';

/** Whose tree the dashboard shows. */
export interface TreeOwner {
  id: number;
  username: string;
  plan: Plan;
  /** Superadmins have no document limit on their own tree. */
  unlimited: boolean;
  /** The caller's own tree (not a team's). */
  own: boolean;
}

/** What asking about a tree reads. */
export type TreeCtx = Pick<Ctx, 'caller' | 'nodes' | 'database'>;

/** The signed-in person the table lets do `action` on the main app (the dashboard's pages: `dashboard` to
 *  look, `manage` to change): nobody signed in 401 `login-required`, an app user 403 for `manage`. */
export function signedIn(ctx: Pick<Ctx, 'caller'>, action: 'dashboard' | 'manage'): Actor {
  return authorizeActor({ actor: ctx.caller.actor }, null, action);
}

const noTeam = () => notFound('No such team.');

/** The tree the caller may change: its own (`ref` absent or its own id), or a team's it may manage (`ref`: the
 *  team's name or id). Not a member (or no such team): 404; a viewer: 403 `viewer`. */
export async function treeOwner(ctx: TreeCtx, ref: string | number | undefined): Promise<TreeOwner> {
  const me = ctx.caller.actor;
  if (me && (ref === undefined || ref === '' || ref === me.accountId))
    return { id: me.accountId, username: me.username, plan: me.plan, unlimited: me.isSuperadmin, own: true };
  if (ref === undefined || ref === '') throw noTeam();
  const { db } = ctx.database;
  if (isSystem(ctx.caller)) {
    // Kiln itself acts on any account's tree (a person's too).
    const row = typeof ref === 'number' ? await accountById(db, ref) : await teamRow(db, ref);
    if (!row) throw notFound('No such account.');
    return { id: row.id, username: row.username, plan: row.plan, unlimited: false, own: false };
  }
  const team = await teamRow(db, ref);
  if (!team) throw noTeam();
  authorizeTeamChange(await ctx.nodes.roleIn(team.id), 'manage', noTeam, team.username);
  return { id: team.id, username: team.username, plan: team.plan, unlimited: false, own: false };
}
