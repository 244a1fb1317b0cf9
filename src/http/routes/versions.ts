// Versions of a document, on its host: list (page and JSON), view one, a readable diff against the
// current content, and restore (GET asks, POST restores as a new save through the pipeline).
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { documentContent } from '../../nodes/serve.ts';
import { documentVersions, restoreVersion, versionOf } from '../../documents/versions.ts';
import { assertSameOrigin } from '../origin.ts';
import { done, wantsHtml, queryMsg } from '../io.ts';
import { fields } from '../schema.ts';
import { nodeUrlPath } from '../../core/urls.ts';
import { versionsPage, versionPage, diffPage, restorePage } from '../../ui/versions.ts';
import { hostAccount, onlyOn } from '../hosts.ts';

/** A query field given once as text (given twice, or not text: absent, as pages have always read it). */
const once = z
  .unknown()
  .transform((v) => (typeof v === 'string' ? v : undefined))
  .optional();
/** `?path=` names the document (default `index.html`); `?raw` asks for a version's saved HTML as a page. */
const LIST = z.looseObject({ path: once });
const ONE = z.looseObject({ raw: once });
const VERSION = fields(
  z.object({
    id: z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number)
      .pipe(z.number().min(1)),
  }),
  {
    id: { code: 'invalid', msg: 'Version ids are positive integers.' },
  },
);

/** Who is signed in, for the pages' header. */
const usernameOf = (req: FastifyRequest) => req.caller.actor?.username;

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document', 'Versions are on the document’s own host.');

  app.get('/_/versions', { schema: { querystring: LIST } }, async (req, reply) => {
    const { node, versions } = await documentVersions(req.ctx, { host: hostAccount(req), path: req.query.path });
    if (!wantsHtml(req))
      return { msg: `${versions.length} versions`, msgType: 'success', document: node.name, versions };
    reply.type('text/html; charset=utf-8');
    return versionsPage({
      node,
      versions,
      documentPath: nodeUrlPath(node),
      username: usernameOf(req),
      base: s.config.baseUrl,
      msg: queryMsg(req),
    });
  });

  app.get('/_/version/:id', { schema: { params: VERSION, querystring: ONE } }, async (req, reply) => {
    const { v, node, info } = await versionOf(req.ctx, req.params);
    if (req.query.raw !== undefined) {
      // The saved HTML as a page, sandboxed: an old version never runs as the live document.
      reply.header('Content-Security-Policy', 'sandbox').header('X-Content-Type-Options', 'nosniff');
      return reply.type('text/html; charset=utf-8').send(v.bytes);
    }
    if (!wantsHtml(req)) return { msg: 'Version', msgType: 'success', version: info, html: v.bytes.toString('utf8') };
    reply.type('text/html; charset=utf-8');
    const content = v.bytes.toString('utf8');
    return versionPage({ node, version: info, content, username: usernameOf(req), base: s.config.baseUrl });
  });

  app.get('/_/version/:id/diff', { schema: { params: VERSION } }, async (req, reply) => {
    const { v, node, info } = await versionOf(req.ctx, req.params);
    const current = (await documentContent(s, node))?.bytes.toString('utf8') ?? '';
    reply.type('text/html; charset=utf-8');
    return diffPage({
      node,
      version: info,
      old: v.bytes.toString('utf8'),
      current,
      username: usernameOf(req),
      base: s.config.baseUrl,
    });
  });

  app.get('/_/restore/:id', { schema: { params: VERSION } }, async (req, reply) => {
    const { node, info } = await versionOf(req.ctx, req.params);
    reply.type('text/html; charset=utf-8');
    return restorePage({ node, version: info, username: usernameOf(req), base: s.config.baseUrl });
  });

  // Another site's form is refused before its input is read.
  const sameOrigin = async (req: FastifyRequest) => assertSameOrigin(req);
  app.post('/_/restore/:id', { schema: { params: VERSION }, preValidation: sameOrigin }, async (req, reply) => {
    const { v, node, result } = await restoreVersion(req.ctx, req.params);
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
