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
import { onlyOn } from '../hosts.ts';
import { fields } from '../schema.ts';
import {
  deleteRecord,
  getRecord,
  listRecords,
  putRecord,
  submitRecord,
  watchRecords,
} from '../../collections/collections.ts';
import { SseStream } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';

const BASE = '/_/collection/:id';

const PAGE_REFUSED = { code: 'invalid-body', msg: 'limit is 1 to 500 and offset 0 or more.' } as const;

const schemas = {
  /** A record as visitors and the owner send it: `data` is any JSON the body parsers made (their depth
   *  limit, src/http/app.ts, is its only bound), taken as it is; `token` only as text. A body without
   *  `data`, or not an object, has none: the use case refuses it once the token or owner is checked. */
  record: z
    .object({ data: z.custom<Json>().optional(), token: z.string().optional().catch(undefined) })
    .nullish()
    .catch({})
    .transform((b) => b ?? {}),
  page: fields(
    z.object({
      limit: z.coerce.number().int().min(1).max(500).default(50),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    }),
    { limit: PAGE_REFUSED, offset: PAGE_REFUSED },
  ),
  collection: z.object({ id: z.string() }),
  oneRecord: z.object({ id: z.string(), key: z.string() }),
};

const header = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Collections live on their owner’s host.');
  const json = { bodyLimit: limits.body.jsonCollection, config: { answers: 'json' as const } };
  const one = { ...json, schema: { params: schemas.oneRecord } };

  app.post(
    `${BASE}/records`,
    { ...json, schema: { params: schemas.collection, body: schemas.record } },
    async (req, reply) => {
      const token = header(req, 'x-submit-token') ?? req.body.token;
      const sub = { token, data: req.body.data, address: req.ip };
      const record = await submitRecord(req.ctx, req.params.id, sub);
      return reply.code(201).send({ msg: 'Received', msgType: 'success', ...record });
    },
  );

  app.get(
    `${BASE}/records`,
    { ...json, schema: { params: schemas.collection, querystring: schemas.page } },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return listRecords(req.ctx, req.params.id, req.query);
    },
  );

  app.get(`${BASE}/records/:key`, one, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return getRecord(req.ctx, req.params.id, req.params.key, header(req, 'x-record-token'));
  });

  app.put(`${BASE}/records/:key`, { ...one, schema: { ...one.schema, body: schemas.record } }, async (req) =>
    putRecord(req.ctx, req.params.id, req.params.key, {
      data: req.body.data,
      editToken: header(req, 'x-record-token'),
      ifMatch: parseIfMatch(req.headers['if-match']),
      address: req.ip,
      sameOrigin: () => assertSameOrigin(req),
    }),
  );

  app.delete(`${BASE}/records/:key`, one, async (req) => {
    assertSameOrigin(req);
    await deleteRecord(req.ctx, req.params.id, req.params.key);
    return { msg: 'Deleted', msgType: 'success' };
  });

  app.get(`${BASE}/events`, { schema: { params: schemas.collection } }, async (req, reply) =>
    watchRecords(req.ctx, {
      id: req.params.id,
      lastEventId: lastEventIdOf(req),
      open: () => {
        takeStreamSlot(s, req, reply);
        reply.hijack();
        return new SseStream(reply.raw);
      },
    }),
  );
};

export default plugin;
