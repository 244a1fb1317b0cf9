// The public data API on document hosts (no key; any origin may call it, without credentials):
//   GET/HEAD /_/api, /_/api/<document_path>   the JSON the document's `api` rules tag defines ('' = index.html)
//   GET/HEAD /<document_path>?data=<rules>    the same with rules from the query (documents.ts hands these
//                                            requests to `answerDataQuery`)
//   OPTIONS  on both                          CORS preflight, 204
// Answers: 200 JSON with a strong ETag (document checksum + rules), `Cache-Control: public, no-cache`,
// `X-Cache: HIT|MISS` and `Age`; 304 on a matching If-None-Match; failures `{error, code}`: 400 (no api
// rules tag: error `No api rules tag`; bad rules: error says which), 404 (private or missing: one body),
// 413 (rules text, tag, document or result too large). Bad rules never answer 500.
// The use case, its visibility rule and the cache design: src/data/read.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { API_PREFIX, answer, pathOf, preflight, wantsData } from '../data-answers.ts';

/** The API reads no query (its rules are the document's tag); any query passes, as the page's own script may
 *  add one. `?data=` on a document URL is the documents route's (its schema reads `data`). */
const query = { schema: { querystring: z.record(z.string(), z.union([z.string(), z.array(z.string())])) } };

const plugin: RoutePlugin = async (app, { services: s }) => {
  const api = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(req, reply);
    if (typeof path !== 'string') return path;
    return answer(req, reply, s, path.slice(API_PREFIX.length), 'exact', { kind: 'api' });
  };
  app.get(API_PREFIX, query, api);
  app.get(`${API_PREFIX}/*`, query, api);
  app.options(API_PREFIX, query, preflight);
  app.options(`${API_PREFIX}/*`, query, preflight);

  // Preflight of `?data=` on document URLs (a cross-origin GET with e.g. If-None-Match sends one).
  const dataPreflight = async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.site.kind !== 'main' && wantsData(req)) return preflight(req, reply);
    return reply.callNotFound();
  };
  app.options('/', query, dataPreflight);
  app.options('/*', query, dataPreflight);
};
export default plugin;
