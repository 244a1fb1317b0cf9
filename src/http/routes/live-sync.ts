// Live sync for browser editors (hyperclayjs communication/live-sync.js), on the document's own host:
//   GET  /_/sync?document-url=<page URL>&lane=live|saved   the lanes of a document, as SSE
//   POST /_/sync            {snapshot|html, sender, identityMap?} + Document-URL: editor snapshot
//   GET  /_/live-sync/stream?page-url=…&lane=…   and   POST /_/live-sync/save (Page-URL, {html, sender}):
//                           the same for older hyperclayjs versions.
// `live` carries editor snapshots and needs ownership (share guests pass); `saved` carries the stored
// HTML after each accepted save (published by the save pipeline), open on public documents. A snapshot
// is broadcast on `live` only and writes nothing. Frames are unnamed `{html, sender, seq}` with
// `id: <seq>`; `seq` grows per document across processes and restarts; Last-Event-ID replays.
// A stream ends when the right it was opened on ends, in every process: one opened only by a share
// token when the owner disables sharing or regenerates the token (`share-revoked` on the document's
// channel); a saved lane when the document turns private and its holder may not view a private one
// (`visibility-changed`: the owner's, an admin's and a share guest's stay open); one opened with a
// browser session when that session ends (grant `session:<id>`, src/events/revocations.ts).
import { grants } from '../../events/revocations.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import type { Standing } from '../../access/authorize.ts';
import { badRequest, notFound } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { getNode } from '../../nodes/tree.ts';
import { findByPath } from '../../nodes/find.ts';
import type { NodeRow } from '../../store/schema.ts';
import { allows, authorize, resourceOf } from '../../access/authorize.ts';
import { channels, type KilnEvent } from '../../events/bus.ts';
import { broadcastSnapshot, publishLive, relaySaved } from '../../events/publish.ts';
import { SseStream, eventFrame } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { liveLaneOwnerView, liveLaneView, savedLaneView } from '../../sse/views.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';
import { sessionLive } from '../../accounts/sessions.ts';
import { callerOf, isShareGuest } from '../share-grant.ts';
import { documentContent } from '../../nodes/serve.ts';
import { z } from 'zod';
import { parse } from '../io.ts';
import { hostAccount, onlyOn } from '../hosts.ts';

type Lane = 'live' | 'saved';

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Documents live on their own host.');
  const hub = s.hub;
  app.addHook('preClose', async () => hub.closeAll());

  const stream = async (req: FastifyRequest, reply: FastifyReply) => {
    const url = firstQuery(req, 'document-url') ?? firstQuery(req, 'page-url');
    if (!url) throw badRequest('The document-url parameter is required.', 'missing-document-url');
    const lane: Lane = firstQuery(req, 'lane') === 'saved' ? 'saved' : 'live';
    const node = await documentOf(s, req, url);
    const caller = callerOf(req, node);
    checkLane(caller, node, lane);
    const access = new LaneAccess(caller, node, lane);
    takeStreamSlot(s, req, reply);
    reply.hijack();
    const sse = new SseStream(reply.raw);
    await hub.attach(channels.document(node.id), sse, {
      // The data-clobber guard's notifications go to those who may resolve them.
      view:
        lane === 'saved'
          ? savedLaneView
          : allows(caller, resourceOf(node), 'versions')
            ? liveLaneOwnerView
            : liveLaneView,
      lastEventId: lastEventIdOf(req),
      onGap: lane === 'saved' ? (lastId) => storedDocumentFrame(s, node.id, lastId) : undefined,
      closeOn: (e) => access.endsWith(e),
      // A team member's stream also ends with the membership.
      grants: [
        ...(req.actor?.writer.startsWith('session:') ? [req.actor.writer] : []),
        ...(req.actor && req.teamRole ? [grants.member(node.owner_id, req.actor.accountId)] : []),
      ],
    });
    // A change committed between the check above and the subscription was not heard: look again.
    if (!sse.closed && !(await access.recheck(s, req))) sse.close();
  };
  app.get('/_/sync', stream);
  app.get('/_/live-sync/stream', stream);

  const relay = async (req: FastifyRequest) => {
    assertSameOrigin(req);
    const url = documentUrlHeader(req.headers);
    if (!url) throw badRequest('The Document-URL header is required.', 'missing-document-url');
    const body = SNAPSHOT.safeParse(req.body ?? {});
    // `{document, sender}` (hyperclay-local's host conformance page): a stored-document frame relayed
    // on the `saved` lane only; nothing is written (saves go through /_/save).
    const relayed = body.success ? body.data.document : undefined;
    const html = body.success ? (body.data.snapshot ?? body.data.html ?? null) : null;
    if (!body.success || (html === null && relayed === undefined))
      throw badRequest('Send the snapshot as JSON {snapshot, sender}.', 'missing-snapshot');
    const node = await documentOf(s, req, url);
    checkLane(callerOf(req, node), node, 'live');
    if (relayed !== undefined) {
      const seq = await publishLive(s, () => relaySaved(s, node, relayed, body.data.sender ?? ''));
      return { success: true, msg: 'Document relayed', msgType: 'success', seq };
    }
    if (html === null) throw badRequest('Send the snapshot as JSON {snapshot, sender}.', 'missing-snapshot');
    // Snapshots are live only, and each supersedes the one before: refused at once (503) while Redis is away.
    const seq = await publishLive(s, () =>
      broadcastSnapshot(s, {
        node,
        html,
        sender: body.data.sender ?? '',
        identityMap: body.data.identityMap ?? undefined,
      }),
    );
    return { success: true, msg: 'Snapshot sent', msgType: 'success', seq };
  };
  app.post('/_/sync', { bodyLimit: limits.body.jsonLiveSync }, relay);
  app.post('/_/live-sync/save', { bodyLimit: limits.body.jsonLiveSync }, relay);
};

/** A query field's first value (hyperclayjs may repeat one), or undefined when absent or empty. */
function firstQuery(req: FastifyRequest, name: string): string | undefined {
  const v = parse(QUERY, req.query)[name];
  const x = Array.isArray(v) ? v[0] : v;
  return x === '' ? undefined : x;
}

const QUERY = z.record(z.string(), z.union([z.string(), z.array(z.string())]).optional());

/** A live-lane snapshot: `snapshot` (or `html`), the sender's tab id, the editor's identity map. */
const SNAPSHOT = z.object({
  snapshot: z.string().optional(),
  html: z.string().optional(),
  document: z.string().optional(),
  sender: z.string().optional(),
  identityMap: z.unknown().optional(),
});

/** The document a page URL names on this host; 404 when there is none (or it is not a document). */
async function documentOf(s: Services, req: FastifyRequest, pageUrl: string): Promise<NodeRow> {
  const { host, path } = documentPathOf(pageUrl);
  if (host !== (req.headers.host ?? '').toLowerCase())
    throw badRequest('The document URL names another host.', 'bad-document-url');
  const node = await findByPath(s, hostAccount(req), path);
  if (node?.type !== 'site') throw notFound();
  return node;
}

function passes(caller: Standing, node: NodeRow, lane: Lane): boolean {
  try {
    checkLane(caller, node, lane);
    return true;
  } catch {
    return false;
  }
}

/** `saved`: whoever may view the document (a private one answers 404, like a missing one). `live`:
 *  the same, and ownership (share guests pass). */
function checkLane(caller: Standing, node: NodeRow, lane: Lane) {
  const resource = resourceOf(node);
  authorize(caller, resource, 'view');
  if (lane === 'live') authorize(caller, resource, 'live');
}

/** Whether an open lane's holder may still have it, as the document's visibility and share grant
 *  change under it (events on the document's channel, per stream). */
class LaneAccess {
  private visibility: NodeRow['visibility'];

  caller: Standing;
  private readonly node: NodeRow;
  private readonly lane: Lane;
  constructor(caller: Standing, node: NodeRow, lane: Lane) {
    this.caller = caller;
    this.node = node;
    this.lane = lane;
    this.visibility = node.visibility;
  }

  private current(): NodeRow {
    return { ...this.node, visibility: this.visibility };
  }

  /** The caller may open this lane now (a share grant counted as valid). */
  allowed(): boolean {
    return passes(this.caller, this.current(), this.lane);
  }

  /** The lane stands only on the share grant: without it the caller would be refused. */
  private viaShare(): boolean {
    return !!this.caller.shareGuest && !passes({ actor: this.caller.actor }, this.current(), this.lane);
  }

  /** Whether this event ends the stream. */
  endsWith(e: KilnEvent): boolean {
    if (e.type === 'share-revoked') {
      if (!this.viaShare()) return false;
      this.caller = { ...this.caller, shareGuest: false };
      return true;
    }
    if (e.type === 'visibility-changed') {
      this.visibility = e.visibility;
      return !this.allowed();
    }
    return false;
  }

  /** Reads the document again (after the subscription is live): false when the caller may no longer
   *  have the lane (turned private, share grant revoked, document gone). */
  async recheck(s: Services, req: FastifyRequest): Promise<boolean> {
    let fresh: NodeRow | undefined;
    try {
      fresh = await getNode(s, this.node.id);
    } catch (err) {
      console.error('re-checking a live-sync lane failed:', err);
      return false;
    }
    if (!fresh) return false;
    // A session that ended (sign-out) between the check and the subscription: nobody signed in now.
    const sessionId = this.caller.actor?.writer.startsWith('session:')
      ? Number(this.caller.actor.writer.slice(8))
      : null;
    if (sessionId !== null && !(await sessionLive(s.database.db, sessionId, s.clock.now())))
      this.caller = { ...this.caller, actor: null };
    this.visibility = fresh.visibility;
    this.caller = { ...this.caller, shareGuest: isShareGuest(req, fresh) };
    return this.allowed();
  }
}

/** After a gap the replay log cannot fill, the saved lane sends the stored document: it is what
 *  every missed saved-lane frame led to. */
async function storedDocumentFrame(s: Services, nodeId: number, lastId: number) {
  const stored = await documentContent(s, { id: nodeId, checksum: null });
  if (!stored || lastId <= 0) return null;
  const html = stored.bytes.toString('utf8');
  return { id: lastId, frame: eventFrame(lastId, { html, sender: 'server-save', seq: lastId }) };
}

export default plugin;
