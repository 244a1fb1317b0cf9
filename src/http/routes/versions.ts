// Versions of a document, on its host: list (page and JSON), view one, a readable diff against the
// current content, and restore (GET asks, POST restores as a new save through the pipeline).
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import { badRequest, notFound } from '../../errors.ts';
import { authorize, resourceOf } from '../../access/authorize.ts';
import { getNode } from '../../nodes/tree.ts';
import { findByPath } from '../../nodes/find.ts';
import { documentContent } from '../../nodes/serve.ts';
import { listVersions, versionContent } from '../../save/history.ts';
import { saveDocument } from '../../save/pipeline.ts';
import { assertSameOrigin } from '../origin.ts';
import { done, wantsHtml, idParam, queryText, queryMsg } from '../io.ts';
import { nodeUrlPath } from '../../core/urls.ts';
import { callerOf } from '../share-grant.ts';
import { versionsPage, versionPage, diffPage, restorePage } from '../../ui/versions.ts';
import { hostAccount, onlyOn } from '../hosts.ts';

/** The document whose versions are asked for, checked for the caller. */
async function documentFor(s: Services, req: FastifyRequest, nodeId: number | null, path?: string) {
  const accountId = hostAccount(req);
  const node = nodeId !== null ? await getNode(s, nodeId) : await findByPath(s, accountId, path ?? 'index.html');
  if (node?.type !== 'site' || node.owner_id !== accountId) throw notFound();
  authorize(callerOf(req, node), resourceOf(node), 'versions');
  return node;
}

function versionId(req: FastifyRequest): number {
  const id = idParam(req, 'id', () => badRequest('Version ids are positive integers.'));
  if (id <= 0) throw badRequest('Version ids are positive integers.');
  return id;
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Versions are on the document’s own host.');
  const db = s.database.db;

  /** The version `:id` names, its document (which the caller may see: else 404) and its listing. */
  async function versionAsked(req: FastifyRequest) {
    const id = versionId(req);
    const v = await versionContent(db, id);
    const node = await documentFor(s, req, v.nodeId);
    const info = (await listVersions(db, node.id)).find((x) => x.id === id)!;
    return { v, node, info };
  }

  app.get('/_/versions', async (req, reply) => {
    const node = await documentFor(s, req, null, queryText(req, 'path'));
    const versions = await listVersions(db, node.id);
    if (!wantsHtml(req))
      return { msg: `${versions.length} versions`, msgType: 'success', document: node.name, versions };
    reply.type('text/html; charset=utf-8');
    return versionsPage({
      node,
      versions,
      documentPath: nodeUrlPath(node),
      username: req.actor?.username,
      base: s.config.baseUrl,
      msg: queryMsg(req),
    });
  });

  app.get('/_/version/:id', async (req, reply) => {
    const { v, node, info } = await versionAsked(req);
    if (queryText(req, 'raw') !== undefined) {
      // The saved HTML as a page, sandboxed: an old version never runs as the live document.
      reply.header('Content-Security-Policy', 'sandbox').header('X-Content-Type-Options', 'nosniff');
      return reply.type('text/html; charset=utf-8').send(v.bytes);
    }
    if (!wantsHtml(req)) return { msg: 'Version', msgType: 'success', version: info, html: v.bytes.toString('utf8') };
    reply.type('text/html; charset=utf-8');
    return versionPage({
      node,
      version: info,
      content: v.bytes.toString('utf8'),
      username: req.actor?.username,
      base: s.config.baseUrl,
    });
  });

  app.get('/_/version/:id/diff', async (req, reply) => {
    const { v, node, info } = await versionAsked(req);
    const current = (await documentContent(s, node))?.bytes.toString('utf8') ?? '';
    reply.type('text/html; charset=utf-8');
    return diffPage({
      node,
      version: info,
      old: v.bytes.toString('utf8'),
      current,
      username: req.actor?.username,
      base: s.config.baseUrl,
    });
  });

  app.get('/_/restore/:id', async (req, reply) => {
    const { node, info } = await versionAsked(req);
    reply.type('text/html; charset=utf-8');
    return restorePage({ node, version: info, username: req.actor?.username, base: s.config.baseUrl });
  });

  app.post('/_/restore/:id', async (req, reply) => {
    assertSameOrigin(req);
    const id = versionId(req);
    const v = await versionContent(db, id);
    const node = await documentFor(s, req, v.nodeId);
    const result = await saveDocument(s, {
      nodeId: node.id,
      bytes: v.bytes,
      by: { kind: 'restore', accountId: req.actor?.accountId ?? null, writer: req.actor?.writer ?? null },
    });
    reply.header('ETag', `"${result.checksum}"`);
    return done(
      req,
      reply,
      result.changed ? `Restored version ${v.backupNumber}.` : 'That version is already the current one.',
      {
        redirect: `/_/versions?path=${encodeURIComponent(nodeUrlPath(node).slice(1))}`,
        extra: { etag: result.checksum },
      },
    );
  });
};
export default plugin;
