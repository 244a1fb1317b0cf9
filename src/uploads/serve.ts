// Serving an upload from its document host: its content type, a strong ETag, 304 on a match, and
// a sandbox CSP for anything that could run script as the host's origin (HTML, SVG, XML). An upload
// is never a service worker's script (the browser sends `Service-Worker: script` when registering
// one): a worker would outlive the page and answer for the whole host. `Service-Worker-Allowed` is
// never sent.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { NodeRow } from '../nodes/tree.ts';
import { forbidden, notFound } from '../errors.ts';
import { ifNoneMatchHits } from '../http/conditional.ts';
import { isActiveContent } from './content-types.ts';

export async function serveUpload(req: FastifyRequest, reply: FastifyReply, s: Services, node: NodeRow) {
  if (req.headers['service-worker'] !== undefined)
    throw forbidden('Uploads cannot be service workers.', 'service-worker-refused');
  const type = node.content_type ?? 'application/octet-stream';
  reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
  if (isActiveContent(type)) reply.header('content-security-policy', 'sandbox');
  if (node.checksum) reply.header('etag', `"${node.checksum}"`);
  if (node.checksum && ifNoneMatchHits(req.headers['if-none-match'], node.checksum)) return reply.code(304).send();
  const stream = node.blob_sha256 ? s.blobs.stream(node.blob_sha256) : null;
  if (!stream) throw notFound('The file’s content is missing.');
  return reply.code(200).header('content-type', type).header('content-length', String(node.size)).send(stream);
}
