// What the dashboard shows of a tree the caller may change: its nodes and what the list marks on them
// (collections, documents whose data was lost), the owner's host and plan limits, and for the page the trees
// the caller may switch to, the trash's count, the latest activity and the unread messages. Read-only use
// cases over ctx; the routes present them (src/http/routes/dashboard/).
import type { Ctx } from '../context.ts';
import type { ListView } from '../ui/dashboard.ts';
import { isUnlimitedSites, limits } from '../limits.ts';
import { uploadLimit } from '../billing/plans.ts';
import { documentHostUrl } from '../core/urls.ts';
import { collectionFoldersOf } from '../store/collections.ts';
import { pendingGuardNodes } from '../store/guards.ts';
import { allowsTeam } from '../access/authorize.ts';
import { teamsOf } from '../teams/teams.ts';
import { unread } from '../messages/messages.ts';
import { listTree, type NodeRow } from './tree.ts';
import { listTrash } from './trash.ts';
import { activityFeed, type ActivityItem } from './activity.ts';
import { signedIn, treeOwner, type TreeOwner } from './manage.ts';

export type ViewCtx = Ctx;

/** The node list of a tree: the tree (treeOwner's answer), its nodes, and what the list shows beside them. */
export async function treeView(
  ctx: ViewCtx,
  ref: string | number | undefined,
): Promise<ListView & { owner: TreeOwner }> {
  const owner = await treeOwner(ctx, ref);
  const nodes = await listTree(ctx, { ownerId: owner.id });
  return { owner, ...(await listViewOf(ctx, owner, nodes)) };
}

/** What the list shows besides the nodes: the owner's host, and its plan's limits. */
async function listViewOf(ctx: ViewCtx, owner: TreeOwner, nodes: NodeRow[]): Promise<ListView> {
  const { db } = ctx.database;
  return {
    nodes,
    collections: await collectionFoldersOf(db, owner.id),
    dataLoss: await pendingGuardNodes(db, owner.id),
    // The code editor opens one's own text uploads (src/http/routes/editor.ts).
    uploadsEditor: owner.own ? `/_/edit/uploads/${encodeURIComponent(owner.username)}` : null,
    hostUrl: documentHostUrl(ctx.config, owner.username),
    siteLimit: owner.unlimited || isUnlimitedSites(owner.plan) ? null : limits.sites[owner.plan],
    uploadLimit: uploadLimit(ctx, owner.plan),
    ownerId: owner.id,
  };
}

export interface DashboardData extends ListView {
  owner: TreeOwner;
  username: string;
  /** The trees the caller may change: its own first, then its teams' where its role lets it. */
  accounts: string[];
  trashed: number;
  activity: ActivityItem[];
  unreadMessages: number;
  isAdmin: boolean;
}

/** The dashboard page of a tree (`team`: a team's name; absent: the caller's own). */
export async function dashboardView(ctx: ViewCtx, team: string | undefined): Promise<DashboardData> {
  const me = signedIn(ctx, 'dashboard');
  const view = await treeView(ctx, team);
  const ownerId = view.owner.id;
  const teams = (await teamsOf(ctx, me.accountId)).filter((t) => allowsTeam(t.role, 'manage'));
  return {
    ...view,
    username: me.username,
    accounts: [me.username, ...teams.map((t) => t.username)],
    trashed: (await listTrash(ctx, { ownerId })).length,
    activity: await activityFeed(ctx, { ownerId, limit: 10 }),
    unreadMessages: view.owner.own ? await unread(ctx, me.accountId) : 0,
    isAdmin: me.isSuperadmin,
  };
}
