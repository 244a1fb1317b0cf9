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
// Auth, scope and plan rules: src/sync/scope.ts. Shapes: src/sync/wire.ts; use cases: read, write, create, changes in src/sync/.
// The streams (`<base>/stream`, `GET|POST /_/sync`, `/_/live-sync/*`) live in their own plugin.
// Errors are JSON {msg, msgType:'error', code} (the app's error handler), never pages or redirects:
// sync clients may send `Accept: */*` or `text/html`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { KilnError } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { ifNoneMatchHits } from '../../core/conditional.ts';
import { jsonAnswers, idParam, textParam, queryOf, parse, type FieldCodes } from '../io.ts';
import { syncScope, type SyncScope } from '../../sync/scope.ts';
import { discoverAccounts } from '../../sync/accounts.ts';
import { nodeNotFound, preconditionOf } from '../../sync/wire.ts';
import { parseIfMatch } from '../../core/conditional.ts';
import { listSyncNodes, readSyncContent } from '../../sync/read.ts';
import { writeSyncContent } from '../../sync/write.ts';
import { createSyncNode } from '../../sync/create.ts';
import { deleteSyncNode, moveSyncNode, renameSyncNode } from '../../sync/changes.ts';
import { z } from 'zod';
import { onlyOn } from '../hosts.ts';

/** A JSON object body; its fields are read by the schemas below. */
const BODY = z.record(z.string(), z.unknown());

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
  type: { code: 'invalid-type', msg: 'type must be "site", "upload" or "folder".' },
  name: { code: 'invalid-name', msg: 'name is required.' },
  newName: { code: 'invalid-name', msg: 'newName is required, as text.' },
  parentId: PARENT,
  targetParentId: PARENT,
  content: { code: 'invalid-content', msg: 'content must be a string (HTML text for documents, base64 for uploads).' },
  expectedVersion: { code: 'invalid-version', msg: 'expectedVersion must be a string.' },
} as const satisfies FieldCodes;

const BASES = ['/_/sync', '/_/team/:team/sync'] as const;

/** Sync answers are never cached by intermediaries. */
function json(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).header('cache-control', 'no-store').send(body);
}

/** The body through its schema; anything but a JSON object is `invalid-body`. */
function bodyOf<T extends z.ZodType>(req: FastifyRequest, schema: T): z.infer<T> {
  const b = req.body ?? {};
  if (Buffer.isBuffer(b) || !BODY.safeParse(b).success)
    throw new KilnError(400, 'Send a JSON object with Content-Type: application/json.', 'invalid-body');
  return parse(schema, b, codes);
}

function idOf(req: FastifyRequest): number {
  return idParam(req, 'id', nodeNotFound);
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  // Sync answers are JSON for every client, whatever it accepts.
  jsonAnswers(app);
  onlyOn(app, 'main', 'The sync API is on the main address of this Kiln.');

  /** The scope of a request on the main app; anything else is not the sync API. */
  async function scope(req: FastifyRequest): Promise<SyncScope> {
    return syncScope(s, req, textParam(req, 'team') || undefined);
  }

  /** The scope is checked before the body of a write is read (`preParsing`): a request without a
   *  valid key is refused with 401 before its (up to 150 MB) body is parsed. */
  const scopes = new WeakMap<FastifyRequest, SyncScope>();
  const scopeFirst = async (req: FastifyRequest) => {
    scopes.set(req, await scope(req));
  };
  const scopeOf = async (req: FastifyRequest) => scopes.get(req) ?? scope(req);

  for (const base of BASES) {
    app.get(`${base}/status`, async (req, reply) => {
      const sc = await scope(req);
      return json(reply, 200, {
        success: true,
        serverTime: s.clock.now().toISOString(),
        username: sc.account.username,
        accountId: sc.account.id,
      });
    });

    app.get(`${base}/nodes`, async (req, reply) => {
      const sc = await scope(req);
      const serverTime = s.clock.now().toISOString();
      const nodes = await listSyncNodes(s, sc);
      return json(reply, 200, { success: true, serverTime, complete: true, nodes });
    });

    app.post(
      `${base}/nodes`,
      { bodyLimit: limits.body.jsonSyncAndUpload, preParsing: scopeFirst },
      async (req, reply) => {
        const sc = await scopeOf(req);
        const b = bodyOf(req, bodies.create);
        const r = await createSyncNode(s, sc, {
          ...b,
          ifMatch: parseIfMatch(req.headers['if-match']),
          ifNoneMatch: preconditionOf(req.headers['if-none-match']),
        });
        return json(reply, r.created ? 201 : 200, { success: true, node: r.node });
      },
    );

    app.get(`${base}/nodes/:id/content`, async (req, reply) => {
      const sc = await scope(req);
      const answer = await readSyncContent(s, sc, idOf(req));
      reply.header('etag', `"${answer.etag}"`).header('cache-control', 'no-cache');
      if (ifNoneMatchHits(req.headers['if-none-match'], answer.etag)) return reply.code(304).send();
      return reply.code(200).send(answer);
    });

    app.put(
      `${base}/nodes/:id/content`,
      { bodyLimit: limits.body.jsonSyncAndUpload, preParsing: scopeFirst },
      async (req, reply) => {
        const sc = await scopeOf(req);
        const b = bodyOf(req, bodies.write);
        const answer = await writeSyncContent(s, sc, idOf(req), {
          ...b,
          ifMatch: parseIfMatch(req.headers['if-match']),
        });
        reply.header('etag', `"${answer.etag}"`);
        return json(reply, 200, answer);
      },
    );

    app.patch(`${base}/nodes/:id/rename`, { preParsing: scopeFirst }, async (req, reply) => {
      const sc = await scopeOf(req);
      const b = bodyOf(req, bodies.rename);
      const answer = await renameSyncNode(s, sc, idOf(req), {
        ...b,
        ifMatch: parseIfMatch(req.headers['if-match']),
      });
      return json(reply, 200, answer);
    });

    app.patch(`${base}/nodes/:id/move`, { preParsing: scopeFirst }, async (req, reply) => {
      const sc = await scopeOf(req);
      const b = bodyOf(req, bodies.move);
      const answer = await moveSyncNode(s, sc, idOf(req), {
        ...b,
        ifMatch: parseIfMatch(req.headers['if-match']),
      });
      return json(reply, 200, answer);
    });

    app.delete(`${base}/nodes/:id`, async (req, reply) => {
      const sc = await scope(req);
      const q = parse(bodies.delete, queryOf(req), codes);
      const answer = await deleteSyncNode(s, sc, idOf(req), {
        ...q,
        ifMatch: parseIfMatch(req.headers['if-match']),
      });
      return json(reply, 200, answer);
    });
  }

  app.get('/_/sync/accounts', async (req, reply) => {
    const sc = await scope(req);
    return json(reply, 200, await discoverAccounts(s, sc.actor));
  });
};

/** `/_/sync/...` and `/_/team/<team>/sync/...` (not the live-sync lanes at `/_/sync` itself). */

export default plugin;
