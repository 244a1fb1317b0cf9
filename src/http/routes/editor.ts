// The code editor: GET /_/edit?path=<document> on a document host (developer owner only; app users 403;
// nobody signed in → login), and GET /_/edit/uploads/<username>/<path>/<filename> on the main app for
// text uploads of the signed-in person. Saving goes through POST /_/save like every other writer.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { badRequest, forbidden, notFound } from '../../errors.ts';
import { authorize, authorizeActor, ownUploads, resourceOf } from '../../access/authorize.ts';
import { findByPath } from '../../nodes/find.ts';
import { documentContent, refuseEncodedPercent } from '../../nodes/serve.ts';
import { editorPage } from '../../ui/editor.ts';
import { nodeUrlPath } from '../../core/urls.ts';
import { callerOf } from '../share-grant.ts';
import { EDITABLE_EXTENSIONS, extensionOf } from '../../uploads/content-types.ts';
import { queryText, textParam } from '../io.ts';
import { hostAccount } from '../hosts.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get(
    '/_/edit',
    { config: { host: 'document', hostMessage: 'Open the editor on the document’s own host.' } },
    async (req, reply) => {
      const path = queryText(req, 'path') ?? 'index.html';
      const node = await findByPath(s, hostAccount(req), path);
      if (node?.type !== 'site') throw notFound();
      // A share guest is an app user here: 403, not a sign-in page.
      authorize(callerOf(req, node), resourceOf(node), 'edit');
      const bytes = (await documentContent(s, node))?.bytes ?? Buffer.alloc(0);
      return sendEditor(
        req,
        reply,
        node.name,
        bytes,
        node.checksum ?? '',
        `${req.protocol}://${req.headers.host}${nodeUrlPath(node)}`,
        s.config.baseUrl,
      );
    },
  );

  app.get('/_/edit/uploads/*', async (req, reply) => {
    // Code editing of one's own uploads: developers (app users 403, nobody signed in: sign in first).
    const actor = authorizeActor({ actor: req.actor }, ownUploads(req.actor), 'edit');
    // The router already decoded the path once: decoding again would let `%2541` name `A`.
    refuseEncodedPercent(req.url.split('?')[0]);
    const rest = textParam(req, '*');
    const [username, ...segments] = rest.split('/');
    if (username !== actor.username || (req.site.kind !== 'main' && username !== req.site.username)) {
      throw forbidden('You can only edit your own uploads.');
    }
    const path = segments.join('/');
    if (!EDITABLE_EXTENSIONS.has(extensionOf(path))) throw badRequest('Only text files open in the editor.');
    const node = await findByPath(s, actor.accountId, path);
    if (node?.type !== 'upload') throw notFound();
    authorize({ actor }, resourceOf(node), 'edit');
    const bytes = await s.blobs.get(node.blob_sha256!);
    if (!bytes) throw notFound('The file’s content is missing.');
    return sendEditor(
      req,
      reply,
      node.name,
      bytes,
      node.checksum ?? '',
      `${req.protocol}://${req.headers.host}${req.url.split('?')[0]}`,
      s.config.baseUrl,
    );
  });
};

function sendEditor(
  req: FastifyRequest,
  reply: FastifyReply,
  name: string,
  bytes: Buffer,
  etag: string,
  documentUrl: string,
  base: string,
) {
  const parts = editorPage({ name, bytes, etag, documentUrl, username: req.actor?.username, base });
  return reply
    .header('Cache-Control', 'no-store')
    .header(
      'content-length',
      parts.reduce((n, p) => n + p.length, 0),
    )
    .type('text/html; charset=utf-8')
    .send(Readable.from(parts));
}

export default plugin;
