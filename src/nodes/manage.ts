// What the dashboard decides before it shows or changes a tree: whose tree a request shows, and whether
// the actor may manage one node. Both ask the access table (src/access/authorize.ts) and throw its one
// refusal, so a handler only parses, calls these and the use cases of tree.ts, and presents.
import type { Services } from '../services.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan, NodeRow } from '../store/schema.ts';
import { notFound } from '../errors.ts';
import { authorize, authorizeTeamChange, resourceOf } from '../access/authorize.ts';
import { findTeam, roleIn } from '../teams/teams.ts';
import { getNode } from './tree.ts';

/** Whose tree the dashboard shows. */
export interface TreeOwner {
  id: number;
  username: string;
  plan: Plan;
  /** Superadmins have no document limit on their own tree. */
  unlimited: boolean;
  /** The actor's own tree (not a team's). */
  own: boolean;
}

/** The tree shown: the actor's own, or a team's it may manage (`ref`: the team's name or id). Not a
 *  member: 404; a viewer: 403 `viewer`. */
export async function treeOwner(s: Services, actor: Actor, ref: string | number | undefined): Promise<TreeOwner> {
  if (ref === undefined || ref === '' || ref === actor.accountId) {
    return {
      id: actor.accountId,
      username: actor.username,
      plan: actor.plan,
      unlimited: actor.isSuperadmin,
      own: true,
    };
  }
  const team = await findTeam(s, ref);
  const role = team ? await roleIn(s, team.id, actor.accountId) : undefined;
  if (!team || !role) throw notFound('No such team.');
  authorizeTeamChange(role, 'manage', notFound, team.username);
  return { id: team.id, username: team.username, plan: team.plan, unlimited: false, own: false };
}

/** The node, when the actor may manage it. A team's node: its owners and editors may; a viewer gets
 *  403 `viewer`, as from the use cases. Any other node: the access table's `manage` on it, so its owner
 *  may, and to anyone else a private node answers 404 like a missing one, a public one 400 `not-owner`. */
export async function nodeToManage(s: Services, actor: Actor | null, nodeId: number): Promise<NodeRow> {
  const node = await getNode(s, nodeId);
  if (!node) throw notFound();
  const role = actor && node.owner_id !== actor.accountId ? await roleIn(s, node.owner_id, actor.accountId) : undefined;
  if (role) authorizeTeamChange(role, 'manage', notFound);
  else authorize({ actor }, resourceOf(node), 'manage');
  return node;
}
