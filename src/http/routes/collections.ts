// A collection's API on its owner's own host (src/collections/collections.ts has the rules):
//   POST   /_/collection/<id>/records           X-Submit-Token (or `token`) + {data}: 201 {id, data, modifiedAt, size, editToken}
//   GET    /_/collection/<id>/records?limit=&offset=   the owner: {records: [{id, data, modifiedAt, size}], total, limit, offset}
//   GET    /_/collection/<id>/records/<key>     the owner, or X-Record-Token: {id, data, modifiedAt, size}
//   PUT    /_/collection/<id>/records/<key>     the same; {data}; If-Match optional (412 when stale); with the
//                                               edit token: 413 past the byte cap, 429 past limits.collection.rewrites
//   DELETE /_/collection/<id>/records/<key>     the owner
//   GET    /_/collection/<id>/events            the owner: named `collection-record` SSE events
// Bodies are JSON up to 1 MB (413 `too-large` beyond). Another account's host answers 404: a
// collection is reached on its owner's host only. Owner writes carry cookies, so they must come from
// this host (403 `cross-origin` otherwise); a submission carries its token, not a cookie.
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { limits } from '../../limits.ts';
import type { Json } from '../../core/json.ts';
import { parseIfMatch } from '../../core/conditional.ts';
import { assertSameOrigin } from '../origin.ts';
import { hostAccount, onlyOn } from '../hosts.ts';
import { parse, textParam, type FieldCodes } from '../io.ts';
import {
  assertCollectionOwner,
  deleteRecord,
  getRecord,
  holdsRecordToken,
  liveCollection,
  listRecords,
  putRecord,
  submitRecord,
} from '../../collections/collections.ts';
import { recordsView } from '../../collections/events.ts';
import { channels } from '../../events/bus.ts';
import { childPathOf } from '../../nodes/find.ts';
import { nodeById } from '../../store/nodes.ts';
import { SseStream } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';
import { grants } from '../../events/revocations.ts';

const BASE = '/_/collection/:id';

/** A record as visitors and the owner send it: `data` is any JSON the body parsers made (their depth
 *  limit, src/http/app.ts, is its only bound), taken as it is; `token` only as text. A body without
 *  `data`, or not an object, has none: the use case refuses it once the token or owner is checked. */
const bodies = {
  record: z.object({ data: z.custom<Json>().optional(), token: z.string().optional().catch(undefined) }).catch({}),
};

const queries = {
  page: z.object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  }),
};

const PAGE_REFUSED = { code: 'invalid-body', msg: 'limit is 1 to 500 and offset 0 or more.' } as const;
const codes = { limit: PAGE_REFUSED, offset: PAGE_REFUSED } as const satisfies FieldCodes;

const header = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Collections live on their owner’s host.');
  const json = { bodyLimit: limits.body.jsonCollection, config: { answers: 'json' as const } };
  const id = (req: FastifyRequest) => textParam(req, 'id');
  const key = (req: FastifyRequest) => textParam(req, 'key');

  app.post(`${BASE}/records`, json, async (req, reply) => {
    const b = parse(bodies.record, req.body);
    const token = header(req, 'x-submit-token') ?? b.token;
    const record = await submitRecord(s, id(req), hostAccount(req), { token, data: b.data, address: req.ip });
    return reply.code(201).send({ msg: 'Received', msgType: 'success', ...record });
  });

  app.get(`${BASE}/records`, json, async (req, reply) => {
    const page = parse(queries.page, req.query, codes);
    reply.header('cache-control', 'no-store');
    return listRecords(s, req.actor, id(req), hostAccount(req), page);
  });

  app.get(`${BASE}/records/:key`, json, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return getRecord(s, req.actor, id(req), hostAccount(req), key(req), header(req, 'x-record-token'));
  });

  app.put(`${BASE}/records/:key`, json, async (req) => {
    // The owner's change rides on a cookie: it must come from this host. A valid edit token is its own
    // credential (a wrong one falls back to the owner's cookie, so it gets the same check).
    if (!holdsRecordToken(s, id(req), key(req), header(req, 'x-record-token'))) assertSameOrigin(req);
    return putRecord(s, req.actor, id(req), hostAccount(req), key(req), {
      data: parse(bodies.record, req.body).data,
      editToken: header(req, 'x-record-token'),
      ifMatch: parseIfMatch(req.headers['if-match']),
      address: req.ip,
    });
  });

  app.delete(`${BASE}/records/:key`, json, async (req) => {
    assertSameOrigin(req);
    await deleteRecord(s, req.actor, id(req), hostAccount(req), key(req));
    return { msg: 'Deleted', msgType: 'success' };
  });

  app.get(`${BASE}/events`, async (req, reply) => {
    const { c } = await liveCollection(s, id(req), hostAccount(req));
    const owner = await assertCollectionOwner(s, req.actor, c);
    const records = await nodeById(s.database.db, c.records_folder_id);
    const held = owner.writer.startsWith('session:') ? [owner.writer] : [];
    if (owner.accountId !== c.owner_id) held.push(grants.member(c.owner_id, owner.accountId));
    takeStreamSlot(s, req, reply);
    reply.hijack();
    const stream = new SseStream(reply.raw);
    await s.hub.attach(channels.account(c.owner_id), stream, {
      view: recordsView(records ? childPathOf(records) : '\0', () => s.clock.now()),
      lastEventId: lastEventIdOf(req),
      grants: held,
    });
  });
};

export default plugin;
