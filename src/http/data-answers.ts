// The data API's answers (src/http/routes/data-api.ts registers its routes; documents.ts hands it
// `?data=` requests): CORS, caching headers, `{error, code}` failures, the decoded path.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { HttpServices } from './services.ts';
import { KilnError, type ErrorCode } from '../errors.ts';
import { servesAccountContent } from './framing.ts';
import { decodeRequestPath } from '../nodes/serve.ts';
import { DOCUMENT_NOT_FOUND, readData, type DataAnswer, type DataRules } from '../data/read.ts';

export const API_PREFIX = '/_/api';

export function cors(reply: FastifyReply) {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', 'ETag, Age, X-Cache');
}

/** Sends a data answer; `keep` is told a 200's headers (all but X-Cache and Age) before it goes. */
export function send(reply: FastifyReply, a: DataAnswer, keep?: (headers: OutgoingHttpHeaders) => void) {
  // The document's own data, for any origin to read (never a page): no framing headers, so the hot path's
  // replay (whose headers are taken here) answers exactly as this one.
  servesAccountContent(reply);
  cors(reply);
  reply.header('x-content-type-options', 'nosniff');
  if (a.etag) reply.header('etag', a.etag);
  if (a.status === 304) return reply.code(304).header('cache-control', 'public, no-cache').send();
  reply.header('cache-control', a.status === 200 ? 'public, no-cache' : 'no-store');
  reply.header('content-type', 'application/json; charset=utf-8');
  if (a.status === 200) keep?.(reply.getHeaders() as OutgoingHttpHeaders);
  if (a.cache) {
    reply.header('x-cache', a.cache.hit ? 'HIT' : 'MISS');
    reply.header('age', String(a.cache.ageSeconds));
  }
  return reply.code(a.status).send(a.body);
}

export function failure(reply: FastifyReply, status: number, error: string, code: ErrorCode) {
  return send(reply, { status, body: JSON.stringify({ error, code }) });
}

/** The request path decoded (traversal refused), or an answer already sent. */
export function pathOf(req: FastifyRequest, reply: FastifyReply): string | FastifyReply {
  try {
    return decodeRequestPath(req.url);
  } catch (err) {
    if (err instanceof KilnError) return failure(reply, err.status, err.message, err.code ?? 'invalid-path');
    throw err;
  }
}

export async function answer(
  req: FastifyRequest,
  reply: FastifyReply,
  s: HttpServices,
  path: string,
  resolve: 'exact' | 'page',
  rules: DataRules,
) {
  const site = req.site;
  if (site.kind === 'main') return failure(reply, 404, DOCUMENT_NOT_FOUND, 'not-found');
  // Taken before storage is read (src/http/hot-path.ts): answers depend on no cookie, so any caller's may be kept.
  const ticket = s.hot.ticket(req, site.accountId, { cookies: 'any' });
  const a = await readData(s, {
    accountId: site.accountId,
    path,
    resolve,
    rules,
    ifNoneMatch: req.headers['if-none-match'],
  });
  const cache = a.cache;
  return send(
    reply,
    a,
    ticket && cache
      ? (headers) => s.hot.keepData(ticket, headers, bytesOf(a.body), a.etag!, cache.createdAt, cache.expiresAt)
      : undefined,
  );
}

const bytesOf = (body: string | Buffer) => (Buffer.isBuffer(body) ? body : Buffer.from(body));

/** True when a document-host GET carries `?data=` (documents.ts then calls `answerDataQuery`). */
export function wantsData(req: FastifyRequest): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  return !!q && typeof q === 'object' && Object.hasOwn(q, 'data');
}

/** GET /<document_path>?data=<rules>: the query's value is URL-decoded (`+` is a space). */
export async function answerDataQuery(req: FastifyRequest, reply: FastifyReply, s: HttpServices) {
  const value = (req.query as Record<string, unknown>).data;
  if (Array.isArray(value)) return failure(reply, 400, 'Give the data parameter once', 'rules-syntax');
  const path = pathOf(req, reply);
  if (typeof path !== 'string') return path;
  return answer(req, reply, s, path, 'page', { kind: 'query', text: typeof value === 'string' ? value : '' });
}

export function preflight(req: FastifyRequest, reply: FastifyReply) {
  cors(reply);
  reply.header('access-control-allow-methods', 'GET, HEAD, OPTIONS');
  // Any request header may be sent (If-None-Match, Cache-Control, ...): nothing here uses credentials.
  const asked = req.headers['access-control-request-headers'];
  if (typeof asked === 'string' && /^[\w\-, ]{1,1000}$/.test(asked))
    reply.header('access-control-allow-headers', asked);
  reply.header('access-control-max-age', '86400');
  return reply.code(204).send();
}
