// The live lanes of a document (src/http/routes/live-sync.ts carries them as SSE): `live` carries editor
// snapshots and needs the `live` row of the table (owners and share guests); `saved` carries the stored HTML
// after each accepted save, for whoever may view the document (a private one answers 404, like a missing
// one). An open lane ends when the right it was opened on ends (`LaneAccess`, through the caller's `ctx.nodes`).
import type { Ctx } from '../context.ts';
import type { Services } from '../services.ts';
import type { Row } from '../store/schema.ts';
import type { KilnEvent } from '../events/bus.ts';
import { anonymous } from '../access/caller.ts';
import { nodesFor, type NodeRef, type Nodes } from '../nodes/open.ts';
import { grants } from '../events/revocations.ts';
import { sessionLive } from '../accounts/sessions.ts';
import { KilnError, notFound } from '../errors.ts';
import { broadcastSnapshot, publishLive, relaySaved } from '../events/publish.ts';
import { newestVersions } from '../store/versions.ts';
import { checksumOfHash, isChecksum } from '../core/checksum.ts';
import { changedElsewhereByRecorded } from '../save/saved.ts';

type NodeRow = Row<'nodes'>;
/** `notices`: the live lane's notifications only (Kiln's toolbar in an editing tab without live sync). */
export type Lane = 'live' | 'saved' | 'notices';
type LaneCtx = Pick<Ctx, 'caller' | 'nodes' | 'database' | 'clock'>;

/** A document of this host, by its path. */
export interface LaneInput {
  host: number;
  path: string;
  lane: Lane;
}

/** The document, when the caller may have the lane: else the table's refusal (404 for a name that is no
 *  document the caller may see). */
async function laneDocument(ctx: Pick<Ctx, 'nodes'>, ref: NodeRef, lane: Lane): Promise<NodeRow> {
  const node = await ctx.nodes.open(ref, 'view');
  if (node.type !== 'site') throw notFound();
  return lane === 'saved' ? node : ctx.nodes.check(node, 'live');
}

/** Opens a lane: the document, whether the guard's notifications go to it (whoever may resolve them), the
 *  grants it stands on (a browser session, a team membership) and what ends it. */
export async function openLane(ctx: LaneCtx, input: LaneInput) {
  const node = await laneDocument(ctx, { ownerId: input.host, path: input.path }, input.lane);
  const standing = await ctx.nodes.standingOn(node);
  const actor = ctx.caller.actor;
  return {
    node,
    guardNotices: input.lane !== 'saved' && (await ctx.nodes.may(node, 'versions')),
    grants: [
      ...(actor?.writer.startsWith('session:') ? [actor.writer] : []),
      // A team member's stream also ends with the membership.
      ...(actor && standing.teamRole ? [grants.member(node.owner_id, actor.accountId)] : []),
    ],
    access: new LaneAccess(ctx, node, input.lane),
  };
}

/** How many of a document's newest versions a lane opened `since` a served page looks through. */
const SINCE_VERSIONS = 50;

/** Who changed the document elsewhere since a tab's page was served (`since`: the ETag of the bytes it got), for
 *  a lane that tab opens later (a change before that reached no lane of it): the newest writer that no browser
 *  tab was (`changedElsewhereBy`'s rule), or null when the page is still the one served, when only browser tabs
 *  saved it since (their peers' snapshots are theirs to know), or when `since` is none of its newest versions. */
export async function changedElsewhereSince(
  ctx: Pick<Ctx, 'database'>,
  nodeId: number,
  since: string,
): Promise<string | null> {
  if (!isChecksum(since)) return null;
  const versions = await newestVersions(ctx.database.db, nodeId, SINCE_VERSIONS);
  const served = versions.findIndex((v) => checksumOfHash(v.content_hash) === since);
  // Newest first: the latest writer elsewhere is named.
  for (const later of versions.slice(0, Math.max(served, 0))) {
    const by = changedElsewhereByRecorded(later.saved_by_kind);
    if (by) return by;
  }
  return null;
}

/** A live-lane snapshot (`snapshot` or `html`), or a stored-document frame relayed on the saved lane
 *  (`document`: hyperclay-local's host conformance page). Nothing is written either way. */
export async function relayToLane(
  ctx: Pick<Ctx, 'nodes'> & Services,
  input: {
    host: number;
    path: string;
    snapshot: string | null;
    document?: string;
    sender: string;
    identityMap?: unknown;
  },
) {
  const node = await laneDocument(ctx, { ownerId: input.host, path: input.path }, 'live');
  if (input.document !== undefined) {
    const seq = await publishLive(ctx, () => relaySaved(ctx, node, input.document!, input.sender));
    return { relayed: true, seq };
  }
  // Snapshots are live only, and each supersedes the one before: refused at once (503) while Redis is away.
  const snapshot = { node, html: input.snapshot ?? '', sender: input.sender, identityMap: input.identityMap };
  return { relayed: false, seq: await publishLive(ctx, () => broadcastSnapshot(ctx, snapshot)) };
}

/** Whether an open lane's holder may still have it, as the document's visibility and share grant change under
 *  it: the caller's `ctx.nodes` judges the document as the events leave it (`mayNow`: at once, with the role it
 *  was opened with), and the document as stored when the lane opens (`recheck`). */
export class LaneAccess {
  /** The document as the lane knows it: its visibility and share grant as the events tell. */
  private node: NodeRow;
  private nodes: Nodes;
  private readonly ctx: LaneCtx;
  private readonly lane: Lane;
  constructor(ctx: LaneCtx, node: NodeRow, lane: Lane) {
    this.ctx = ctx;
    this.nodes = ctx.nodes;
    this.node = node;
    this.lane = lane;
  }

  /** The table's answer for the caller on the document as it is now. */
  private passes(): boolean {
    return this.nodes.mayNow(this.node, 'view') && (this.lane === 'saved' || this.nodes.mayNow(this.node, 'live'));
  }

  /** Whether this event ends the stream. */
  endsWith(e: KilnEvent): boolean {
    // A revoked share grant opens the document no more (a lane that stands on more than the grant goes on).
    if (e.type === 'share-revoked') this.node = { ...this.node, share_enabled: 0, share_token: null };
    else if (e.type === 'visibility-changed') this.node = { ...this.node, visibility: e.visibility };
    else return false;
    return !this.passes();
  }

  /** Opens the document again (after the subscription is live): false when the caller may no longer have the
   *  lane (turned private, share grant revoked, document gone, the session ended meanwhile). */
  async recheck(): Promise<boolean> {
    const caller = this.ctx.caller;
    try {
      // A session that ended (sign-out) between the check and the subscription: nobody signed in now.
      const sessionId = caller.actor?.writer.startsWith('session:') ? Number(caller.actor.writer.slice(8)) : null;
      const ended = sessionId !== null && !(await sessionLive(this.ctx.database.db, sessionId, this.ctx.clock.now()));
      const nodes = ended ? nodesFor(this.ctx.database.db, anonymous(caller.host, caller.shareGrant)) : this.ctx.nodes;
      this.node = await laneDocument({ nodes }, this.node.id, this.lane);
      this.nodes = nodes;
      return true;
    } catch (err) {
      if (!(err instanceof KilnError)) console.error('re-checking a live-sync lane failed:', err);
      return false;
    }
  }
}
