// Live sync for browser editors (hyperclayjs communication/live-sync.js), on the document's own host:
//   GET  /_/sync?document-url=<page URL>&lane=live|saved|notices   the lanes of a document, as SSE
//   POST /_/sync            {snapshot|html, sender, identityMap?} + Document-URL: editor snapshot
//   GET  /_/live-sync/stream?page-url=…&lane=…   and   POST /_/live-sync/save (Page-URL, {html, sender}):
//                           the same for older hyperclayjs versions.
// `live` carries editor snapshots and needs ownership (share guests pass); `saved` carries the stored
// HTML after each accepted save (published by the save pipeline), open on public documents; `notices` (Kiln's
// own) only the live lane's notifications: a change made elsewhere, the data-clobber guard's. A snapshot
// is broadcast on `live` only and writes nothing. `&since=<ETag of the page served>` on `live` or `notices`: when
// the page was changed elsewhere after it was served (before the lane opened), the first frame is that reload
// notice, without an id. Frames are unnamed `{html, sender, seq}` with
// `id: <seq>`; `seq` grows per document across processes and restarts; Last-Event-ID replays.
// A stream ends when the right it was opened on ends, in every process: one opened only by a share
// token when the owner disables sharing or regenerates the token (`share-revoked` on the document's
// channel); a saved lane when the document turns private and its holder may not view a private one
// (`visibility-changed`: the owner's, an admin's and a share guest's stay open); one opened with a
// browser session when that session ends (grant `session:<id>`, src/events/revocations.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { badRequest } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { changedElsewhereSince, openLane, relayToLane } from '../../documents/live.ts';
import { channels } from '../../events/bus.ts';
import { SseStream, eventFrame } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { changedBeforeFrame, viewOfLane } from '../../sse/views.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';
import { documentContent } from '../../nodes/serve.ts';
import { fields } from '../schema.ts';
import { hostAccount, onlyOn } from '../hosts.ts';
import type { Services } from '../../services.ts';

/** A query field's first value (hyperclayjs may repeat one); '' is absent. */
const first = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v[0] : v) || undefined)
  .optional();
const STREAM = z.looseObject({ 'document-url': first, 'page-url': first, lane: first, since: first });

/** A live-lane snapshot: `snapshot` (or `html`), the sender's tab id, the editor's identity map; or
 *  `{document, sender}` (hyperclay-local's host conformance page): a stored-document frame relayed on the
 *  `saved` lane only. Nothing is written (saves go through /_/save). */
const SNAPSHOT_WORDS = { code: 'missing-snapshot', msg: 'Send the snapshot as JSON {snapshot, sender}.' } as const;
const SNAPSHOT = fields(
  z
    .object({
      snapshot: z.string().optional(),
      html: z.string().optional(),
      document: z.string().optional(),
      sender: z.string().optional(),
      identityMap: z.unknown().optional(),
    })
    .refine((b) => (b.snapshot ?? b.html ?? b.document) !== undefined),
  {
    '': SNAPSHOT_WORDS,
    snapshot: SNAPSHOT_WORDS,
    html: SNAPSHOT_WORDS,
    document: SNAPSHOT_WORDS,
    sender: SNAPSHOT_WORDS,
  },
);

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Documents live on their own host.');
  const hub = s.hub;
  app.addHook('preClose', async () => hub.closeAll());

  const stream = async (req: FastifyRequest<{ Querystring: z.infer<typeof STREAM> }>, reply: FastifyReply) => {
    const url = req.query['document-url'] ?? req.query['page-url'];
    if (!url) throw badRequest('The document-url parameter is required.', 'missing-document-url');
    const lane = req.query.lane === 'saved' || req.query.lane === 'notices' ? req.query.lane : 'live';
    const open = await openLane(req.ctx, { host: hostAccount(req), path: pathOnThisHost(req, url), lane });
    takeStreamSlot(s, req, reply);
    reply.hijack();
    const sse = new SseStream(reply.raw);
    const lastEventId = lastEventIdOf(req);
    // `since`: the ETag of the page the tab was served (Kiln's toolbar has it). A change made elsewhere after it
    // and before this lane opened is told first; a resumed stream had that on its first open.
    const since = lane !== 'saved' && !lastEventId ? req.query.since : undefined;
    await hub.attach(channels.document(open.node.id), sse, {
      // The data-clobber guard's notifications go to those who may resolve them.
      view: viewOfLane(lane, open.guardNotices),
      lastEventId,
      catchUp: since
        ? async () => {
            const by = await changedElsewhereSince(s, open.node.id, since);
            return by ? changedBeforeFrame(by, open.guardNotices) : null;
          }
        : undefined,
      onGap: lane === 'saved' ? (lastId) => storedDocumentFrame(s, open.node.id, lastId) : undefined,
      closeOn: (e) => open.access.endsWith(e),
      grants: open.grants,
    });
    // A change committed between the check above and the subscription was not heard: look again.
    if (!sse.closed && !(await open.access.recheck())) sse.close();
  };
  app.get('/_/sync', { schema: { querystring: STREAM } }, stream);
  app.get('/_/live-sync/stream', { schema: { querystring: STREAM } }, stream);

  const relay = async (req: FastifyRequest<{ Body: z.infer<typeof SNAPSHOT> }>) => {
    const b = req.body;
    const path = pathOnThisHost(req, documentUrlHeader(req.headers)!);
    const sent = await relayToLane(req.ctx, {
      host: hostAccount(req),
      path,
      snapshot: b.snapshot ?? b.html ?? null,
      document: b.document,
      sender: b.sender ?? '',
      identityMap: b.identityMap ?? undefined,
    });
    const msg = sent.relayed ? 'Document relayed' : 'Snapshot sent';
    return { success: true, msg, msgType: 'success', seq: sent.seq };
  };
  // Another site's page, or no Document-URL: refused before the body is read.
  const relayFirst = async (req: FastifyRequest) => {
    assertSameOrigin(req);
    if (!documentUrlHeader(req.headers))
      throw badRequest('The Document-URL header is required.', 'missing-document-url');
  };
  const relayRoute = { bodyLimit: limits.body.jsonLiveSync, schema: { body: SNAPSHOT }, preValidation: relayFirst };
  app.post('/_/sync', relayRoute, relay);
  app.post('/_/live-sync/save', relayRoute, relay);
};

/** The path a page URL names on this host; 400 when it names another host. */
function pathOnThisHost(req: FastifyRequest, pageUrl: string): string {
  const { host, path } = documentPathOf(pageUrl);
  if (host !== (req.headers.host ?? '').toLowerCase())
    throw badRequest('The document URL names another host.', 'bad-document-url');
  return path;
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
