// The data-clobber guard's doors (src/guard/guard.ts), in hyperclayjs 1.38's data-loss panel's wire:
//   GET  {document_host}/_/data-loss?file=<page URL>        → {event} (null unless the caller may resolve it)
//   POST {document_host}/_/data-loss/<id>  {choice, file}   → {ok, choice, status}; refusals {error, code}
// The document is named by `file` (query or body) or the Page-URL header, on this host. Restore and revert
// are saves through THE pipeline (a version, events, stylesheet), by the caller.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { documentPathOf } from '../../save/document-url.ts';
import { pendingLoss, resolveLoss, type LossInput } from '../../documents/data-loss.ts';
import { KilnError } from '../../errors.ts';
import { assertSameOrigin } from '../origin.ts';
import { fields } from '../schema.ts';

/** A field given once as text ('' and anything else: absent, so the next place that may name it counts). */
const text = z
  .unknown()
  .transform((v) => (typeof v === 'string' && v !== '' ? v : undefined))
  .optional();
/** `?file=<page URL>` (else the Page-URL header). */
const PENDING = z.looseObject({ file: text });
/** The panel's choice (which choices there are, the use case says once the caller may make one); `file` names the
 *  page (else `?file=`, else the Page-URL header); `id` (else the path's). */
const CHOICE = fields(z.looseObject({ choice: z.string().max(16), file: text, id: text }), {
  choice: { code: 'invalid', msg: 'choice must be dismiss | revert | restore' },
});

const plugin: RoutePlugin = async (app) => {
  // The panel shows `error` in its toast; Kiln's clients read `msg` and `code`: refusals carry both.
  const json = { config: { host: 'document', answers: 'json', errorField: true } } as const;

  app.get('/_/data-loss', { ...json, schema: { querystring: PENDING } }, async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    return pendingLoss(req.ctx, documentNamed(req, req.query.file));
  });

  app.post(
    '/_/data-loss/:id',
    {
      ...json,
      bodyLimit: 16 * 1024,
      schema: { body: CHOICE, params: z.object({ id: z.string() }), querystring: PENDING },
      // Another site's page is refused before its body is read.
      preValidation: async (req) => assertSameOrigin(req),
    },
    async (req, reply) => {
      const b = req.body;
      const named = documentNamed(req, req.query.file ?? b.file);
      try {
        return await resolveLoss(req.ctx, { ...named, id: req.params.id || (b.id ?? null), choice: b.choice });
      } catch (err) {
        if (err instanceof KilnError) return refuse(reply, err.status, err.message, err.code);
        throw err;
      }
    },
  );
};

/** The panel reads `error`; Kiln's clients read `msg` and `code`: both. */
function refuse(reply: FastifyReply, status: number, error: string, code: string | undefined) {
  return reply.code(status).send({ error, msg: error, msgType: 'error', ...(code ? { code } : {}) });
}

/** The document a request names (`file`, else the Page-URL header), when it is a URL of this host. */
function documentNamed(req: FastifyRequest, file: string | undefined): LossInput {
  const host = req.site.kind === 'main' ? 0 : req.site.accountId;
  const header = req.headers['page-url'];
  const url = file ?? [Array.isArray(header) ? header[0] : header].find((v) => typeof v === 'string' && v !== '');
  if (!url || req.site.kind === 'main') return { host, path: null };
  try {
    const named = documentPathOf(url);
    return { host, path: named.host === (req.headers.host ?? '').toLowerCase() ? named.path : null };
  } catch {
    // not a page URL
    return { host, path: null };
  }
}

export default plugin;
