// The live lanes of a document (src/http/routes/live-sync.ts carries them as SSE): `live` carries editor
// snapshots and needs the `live` row of the table (owners and share guests); `saved` carries the stored HTML
// after each accepted save, for whoever may view the document (a private one answers 404, like a missing
// one). An open lane ends when the right it was opened on ends (`LaneAccess`).
import type { Ctx } from '../context.ts';
import type { Services } from '../services.ts';
import type { Row } from '../store/schema.ts';
import type { KilnEvent } from '../events/bus.ts';
import type { Standing } from '../access/authorize.ts';
import { allows, resourceOf } from '../access/authorize.ts';
import { anonymous } from '../access/caller.ts';
import { nodesFor, type NodeRef } from '../nodes/open.ts';
import { grants } from '../events/revocations.ts';
import { sessionLive } from '../accounts/sessions.ts';
import { KilnError, notFound } from '../errors.ts';
import { broadcastSnapshot, publishLive, relaySaved } from '../events/publish.ts';

type NodeRow = Row<'nodes'>;
export type Lane = 'live' | 'saved';
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
  return lane === 'live' ? ctx.nodes.check(node, 'live') : node;
}

/** Opens a lane: the document, whether the guard's notifications go to it (whoever may resolve them), the
 *  grants it stands on (a browser session, a team membership) and what ends it. */
export async function openLane(ctx: LaneCtx, input: LaneInput) {
  const node = await laneDocument(ctx, { ownerId: input.host, path: input.path }, input.lane);
  const standing = await ctx.nodes.standingOn(node);
  const actor = ctx.caller.actor;
  return {
    node,
    guardNotices: input.lane === 'live' && (await ctx.nodes.may(node, 'versions')),
    grants: [
      ...(actor?.writer.startsWith('session:') ? [actor.writer] : []),
      // A team member's stream also ends with the membership.
      ...(actor && standing.teamRole ? [grants.member(node.owner_id, actor.accountId)] : []),
    ],
    access: new LaneAccess(ctx, standing, node, input.lane),
  };
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
 *  it (events on the document's channel, judged at once: the standing it was opened with, as it changes). */
export class LaneAccess {
  private visibility: NodeRow['visibility'];
  private standing: Standing;
  private readonly ctx: LaneCtx;
  private readonly node: NodeRow;
  private readonly lane: Lane;
  constructor(ctx: LaneCtx, standing: Standing, node: NodeRow, lane: Lane) {
    this.ctx = ctx;
    this.standing = standing;
    this.node = node;
    this.lane = lane;
    this.visibility = node.visibility;
  }

  /** The table's answer for this standing on the document as it is now. */
  private passes(standing: Standing): boolean {
    const resource = resourceOf({ ...this.node, visibility: this.visibility });
    return allows(standing, resource, 'view') && (this.lane !== 'live' || allows(standing, resource, 'live'));
  }

  /** Whether this event ends the stream. */
  endsWith(e: KilnEvent): boolean {
    if (e.type === 'share-revoked') {
      // Only a lane that stands on the share grant alone ends.
      if (!this.standing.shareGuest || this.passes({ actor: this.standing.actor, teamRole: this.standing.teamRole }))
        return false;
      this.standing = { ...this.standing, shareGuest: false };
      return true;
    }
    if (e.type === 'visibility-changed') {
      this.visibility = e.visibility;
      return !this.passes(this.standing);
    }
    return false;
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
      const fresh = await laneDocument({ nodes }, this.node.id, this.lane);
      this.standing = await nodes.standingOn(fresh);
      this.visibility = fresh.visibility;
      return true;
    } catch (err) {
      if (!(err instanceof KilnError)) console.error('re-checking a live-sync lane failed:', err);
      return false;
    }
  }
}
