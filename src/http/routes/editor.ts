// The code editor: GET /_/edit?path=<document> on a document host (developer owner only; app users 403;
// nobody signed in → login), and GET /_/edit/uploads/<username>/<path>/<filename> on the main app for
// text uploads of the signed-in person. Saving goes through POST /_/save like every other writer.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { badRequest } from '../../errors.ts';
import { refuseEncodedPercent } from '../../nodes/serve.ts';
import { editorPage } from '../../ui/editor.ts';
import { nodeUrlPath } from '../../core/urls.ts';
import { EDITABLE_EXTENSIONS, extensionOf } from '../../uploads/content-types.ts';
import { documentToEdit, uploadToEdit } from '../../uploads/edit.ts';
import { textParam } from '../io.ts';
import { limits } from '../../limits.ts';

const EDIT_QUERY = z.object({ path: z.string().max(limits.pathLength).default('index.html') });

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get(
    '/_/edit',
    {
      config: { host: 'document', hostMessage: 'Open the editor on the document’s own host.' },
      schema: { querystring: EDIT_QUERY },
    },
    async (req, reply) => {
      const { node, bytes } = await documentToEdit(req.ctx, req.query.path || 'index.html');
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
    // The router already decoded the path once: decoding again would let `%2541` name `A`.
    refuseEncodedPercent(req.url.split('?')[0]);
    const [username, ...segments] = textParam(req, '*').split('/');
    const path = segments.join('/');
    const { node, bytes } = await uploadToEdit(req.ctx, { username, path }, () => {
      if (!EDITABLE_EXTENSIONS.has(extensionOf(path))) throw badRequest('Only text files open in the editor.');
    });
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
  const parts = editorPage({ name, bytes, etag, documentUrl, username: req.caller.actor?.username, base });
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
