// Serving an upload from its document host: its content type, a strong ETag, 304 on a match, one byte
// range (206, or 416; `If-Range` with a stale ETag gets the whole file), streamed from the blob store, and
// a sandbox CSP for anything that could run script as the host's origin (HTML, SVG, XML). An upload
// is never a service worker's script (the browser sends `Service-Worker: script` when registering
// one): a worker would outlive the page and answer for the whole host. `Service-Worker-Allowed` is
// never sent.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { NodeRow } from '../store/schema.ts';
import { forbidden, notFound } from '../errors.ts';
import { byteRange, ifNoneMatchHits, ifRangeTag } from '../core/conditional.ts';
import { isActiveContent } from './content-types.ts';
import { servesAccountContent } from '../http/framing.ts';

export async function serveUpload(req: FastifyRequest, reply: FastifyReply, s: Services, node: NodeRow) {
  if (req.headers['service-worker'] !== undefined)
    throw forbidden('Uploads cannot be service workers.', 'service-worker-refused');
  const type = node.content_type ?? 'application/octet-stream';
  reply
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', node.visibility === 'private' ? 'private, no-cache' : 'no-cache');
  if (isActiveContent(type)) reply.header('content-security-policy', 'sandbox');
  if (node.checksum) reply.header('etag', `"${node.checksum}"`);
  if (node.checksum && ifNoneMatchHits(req.headers['if-none-match'], node.checksum))
    return servesAccountContent(reply).code(304).send();
  if (!node.blob_sha256) throw notFound('The file’s content is missing.');
  servesAccountContent(reply);
  reply.header('accept-ranges', 'bytes').header('content-type', type);
  const size = node.size ?? 0;
  const ifRange = req.headers['if-range'];
  const rangeFresh = ifRange === undefined || ifRangeTag(ifRange) === node.checksum;
  const range = rangeFresh ? byteRange(req.headers.range, size) : null;
  if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${size}`).send();
  const stream = await s.blobs.stream(node.blob_sha256, range ?? undefined);
  if (!stream) throw notFound('The file’s content is missing.');
  if (!range) return reply.code(200).header('content-length', String(size)).send(stream);
  return reply
    .code(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
    .header('content-length', String(range.end - range.start + 1))
    .send(stream);
}
