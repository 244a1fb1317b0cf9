// The sync API (key holders: the desktop sync tool, command-line agents). On the main app only.
// Every route exists at the personal base `/_/sync` and at the team base `/_/team/<team>/sync`:
//
//   GET    <base>/status                      {success, serverTime, username, accountId}
//   GET    <base>/nodes                       {success, serverTime, complete: true, nodes: [...]}
//   POST   <base>/nodes                       {type, name, parentId, content?, modifiedAt?} → 201 {success, node}
//                                             (200 when an existing node of the account is reused)
//   GET    <base>/nodes/:id/content           {success, nodeId, nodeType, name, path, content, ...}; ETag, 304
//   PUT    <base>/nodes/:id/content           {content, modifiedAt?, snapshotHtml?, senderId?} (If-Match)
//   PATCH  <base>/nodes/:id/rename            {newName, expectedVersion?}
//   PATCH  <base>/nodes/:id/move              {targetParentId, newName?, expectedVersion?}
//   DELETE <base>/nodes/:id[?cascade=true][&expectedVersion=v]
//   GET    /_/sync/accounts                   protocol 2 discovery (personal base only)
//
// Auth, scope and plan rules: src/sync/scope.ts (made once per request: src/http/sync-door.ts). Shapes: src/sync/wire.ts; use cases: read, write, create, changes in src/sync/.
// The streams (`<base>/stream`, `GET|POST /_/sync`, `/_/live-sync/*`) live in their own plugin.
// Errors are JSON {msg, msgType:'error', code} (the app's error handler), never pages or redirects:
// sync clients may send `Accept: */*` or `text/html`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { limits } from '../../limits.ts';
import { ifNoneMatchHits, parseIfMatch } from '../../core/conditional.ts';
import { jsonAnswers, type FieldCodes } from '../io.ts';
import { fields } from '../schema.ts';
import { syncCtx, syncDoor } from '../sync-door.ts';
import { discoverAccounts } from '../../sync/accounts.ts';
import { preconditionOf } from '../../sync/wire.ts';
import { listSyncNodes, readSyncContent, syncStatus } from '../../sync/read.ts';
import { writeSyncContent } from '../../sync/write.ts';
import { createSyncNode } from '../../sync/create.ts';
import { deleteSyncNode, moveSyncNode, renameSyncNode } from '../../sync/changes.ts';
import { z } from 'zod';
import { onlyOn } from '../hosts.ts';

/** A folder id as the clients send it: a number, its decimal text, or 0 / "root" / "" / null for the
 *  top level. */
const parentRef = z.union([
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^(\d{1,15}|root|)$/),
  z.null(),
]);
const folderId = (v: z.infer<typeof parentRef> | undefined): number =>
  v === undefined || v === null || v === '' || v === 'root' ? 0 : Number(v);
/** Protocol 2's precondition, the node's `structureVersion` as last listed ('' and null: none). */
const expectedVersion = z
  .string()
  .nullish()
  .transform((v) => v || null);
/** A field the clients may send as anything: kept when text, else dropped (live-sync extras). */
const optionalText = z.string().optional().catch(undefined);

/** The sync API's bodies. The first bad field answers its registered code, with the words the desktop
 *  client shows (`codes`). */
const bodies = {
  create: z.object({
    type: z.enum(['site', 'folder', 'upload']),
    name: z.string().refine((v) => v.trim() !== ''),
    parentId: parentRef.optional().transform(folderId),
    content: z.string().nullish(),
  }),
  write: z.object({ content: z.string(), snapshotHtml: optionalText, senderId: optionalText }),
  rename: z
    .object({ newName: z.string().nullish(), name: z.string().nullish(), expectedVersion })
    .transform(({ newName, name, expectedVersion }) => ({ newName: newName ?? name ?? '', expectedVersion }))
    .refine((b) => b.newName !== '', { path: ['newName'] }),
  move: z
    .object({
      targetParentId: parentRef.optional(),
      parentId: parentRef.optional(),
      newName: z.string().nullish(),
      expectedVersion,
    })
    .transform((b) => ({
      // Protocol 1 clients name the target `parentId`.
      targetParentId: folderId(b.targetParentId ?? b.parentId),
      newName: b.newName ?? null,
      expectedVersion: b.expectedVersion,
    })),
  delete: z.object({
    cascade: z.enum(['true', '1']).optional().catch(undefined).transform(Boolean),
    expectedVersion,
  }),
};

const PARENT = {
  code: 'invalid-parent',
  msg: 'parentId must be a folder id (0 or "root" for the top level).',
} as const;
const codes = {
  // Anything but a JSON object (an array, text, bytes).
  '': { code: 'invalid-body', msg: 'Send a JSON object with Content-Type: application/json.' },
  type: { code: 'invalid-type', msg: 'type must be "site", "upload" or "folder".' },
  name: { code: 'invalid-name', msg: 'name is required.' },
  newName: { code: 'invalid-name', msg: 'newName is required, as text.' },
  parentId: PARENT,
  targetParentId: PARENT,
  content: { code: 'invalid-content', msg: 'content must be a string (HTML text for documents, base64 for uploads).' },
  expectedVersion: { code: 'invalid-version', msg: 'expectedVersion must be a string.' },
} as const satisfies FieldCodes;

/** Each route's schemas: the body (or query) with the codes above, and the path's node id (a malformed one is
 *  no node: 0, which the use case answers 404 `node-not-found` like an unknown id). */
const params = z.object({
  team: z.string().optional(),
  id: z
    .string()
    .optional()
    .transform((v) => (v && /^\d{1,15}$/.test(v) ? Number(v) : 0)),
});
const schemas = {
  read: { params },
  create: { params, body: fields(bodies.create, codes) },
  write: { params, body: fields(bodies.write, codes) },
  rename: { params, body: fields(bodies.rename, codes) },
  move: { params, body: fields(bodies.move, codes) },
  delete: { params, querystring: fields(bodies.delete, codes) },
};

const BASES = ['/_/sync', '/_/team/:team/sync'] as const;

/** Sync answers are never cached by intermediaries. */
function json(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).header('cache-control', 'no-store').send(body);
}

/** The request's preconditions. */
const ifMatchOf = (req: FastifyRequest) => parseIfMatch(req.headers['if-match']);

const plugin: RoutePlugin = async (app) => {
  // Key first: the scope is made before anything else is read (src/http/sync-door.ts).
  syncDoor(app);
  // Sync answers are JSON for every client, whatever it accepts.
  jsonAnswers(app);
  onlyOn(app, 'main', 'The sync API is on the main address of this Kiln.');
  const writes = { bodyLimit: limits.body.jsonSyncAndUpload };

  for (const base of BASES) {
    app.get(`${base}/status`, { schema: schemas.read }, async (req, reply) =>
      json(reply, 200, await syncStatus(syncCtx(req))),
    );

    app.get(`${base}/nodes`, { schema: schemas.read }, async (req, reply) =>
      json(reply, 200, await listSyncNodes(syncCtx(req))),
    );

    app.post(`${base}/nodes`, { ...writes, schema: schemas.create }, async (req, reply) => {
      const input = { ...req.body, ifMatch: ifMatchOf(req), ifNoneMatch: preconditionOf(req.headers['if-none-match']) };
      const r = await createSyncNode(syncCtx(req), input);
      return json(reply, r.created ? 201 : 200, { success: true, node: r.node });
    });

    app.get(`${base}/nodes/:id/content`, { schema: schemas.read }, async (req, reply) => {
      const answer = await readSyncContent(syncCtx(req), { nodeId: req.params.id });
      reply.header('etag', `"${answer.etag}"`).header('cache-control', 'no-cache');
      if (ifNoneMatchHits(req.headers['if-none-match'], answer.etag)) return reply.code(304).send();
      return reply.code(200).send(answer);
    });

    app.put(`${base}/nodes/:id/content`, { ...writes, schema: schemas.write }, async (req, reply) => {
      const input = { ...req.body, nodeId: req.params.id, ifMatch: ifMatchOf(req) };
      const answer = await writeSyncContent(syncCtx(req), input);
      reply.header('etag', `"${answer.etag}"`);
      return json(reply, 200, answer);
    });

    app.patch(`${base}/nodes/:id/rename`, { schema: schemas.rename }, async (req, reply) => {
      const input = { ...req.body, nodeId: req.params.id, ifMatch: ifMatchOf(req) };
      return json(reply, 200, await renameSyncNode(syncCtx(req), input));
    });

    app.patch(`${base}/nodes/:id/move`, { schema: schemas.move }, async (req, reply) => {
      const input = { ...req.body, nodeId: req.params.id, ifMatch: ifMatchOf(req) };
      return json(reply, 200, await moveSyncNode(syncCtx(req), input));
    });

    app.delete(`${base}/nodes/:id`, { schema: schemas.delete }, async (req, reply) => {
      const input = { ...req.query, nodeId: req.params.id, ifMatch: ifMatchOf(req) };
      return json(reply, 200, await deleteSyncNode(syncCtx(req), input));
    });
  }

  app.get('/_/sync/accounts', { schema: schemas.read }, async (req, reply) =>
    json(reply, 200, await discoverAccounts(syncCtx(req))),
  );
};

export default plugin;
