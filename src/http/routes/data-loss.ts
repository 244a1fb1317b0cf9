// The data-clobber guard's doors (src/guard/guard.ts), in hyperclayjs 1.38's data-loss panel's wire:
//   GET  {document_host}/_/data-loss?file=<page URL>        → {event} (null unless the caller may resolve it)
//   POST {document_host}/_/data-loss/<id>  {choice, file}   → {ok, choice, status}; refusals {error, code}
// The document is named by `file` (query or body) or the Page-URL header, on this host. Restore and revert
// are saves through THE pipeline (a version, events, stylesheet), by the caller.
import { exactly } from '../../core/conditional.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import { documentPathOf } from '../../save/document-url.ts';
import { findByPath } from '../../nodes/find.ts';
import type { NodeRow } from '../../store/schema.ts';
import { allows, authorize, resourceOf } from '../../access/authorize.ts';
import { saveDocument } from '../../save/pipeline.ts';
import type { Choice } from '../../guard/guard.ts';
import { KilnError } from '../../errors.ts';
import { assertSameOrigin } from '../origin.ts';
import { callerOf } from '../share-grant.ts';
import type { Services } from '../../services.ts';

const CHOICES: Choice[] = ['restore', 'revert', 'dismiss'];

const plugin: RoutePlugin = async (app, { services: s }) => {
  const json = { config: { host: 'document', answers: 'json' } } as const;

  app.get('/_/data-loss', json, async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    const node = await documentNamed(s, req);
    if (!node || !allows(callerOf(req, node), resourceOf(node), 'versions')) return { event: null };
    return { event: await s.guard.pending(node) };
  });

  app.post<{ Params: { id: string } }>('/_/data-loss/:id', { ...json, bodyLimit: 16 * 1024 }, async (req, reply) => {
    assertSameOrigin(req);
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const node = await documentNamed(s, req, body.file);
    if (!node) return refuse(reply, 400, 'file required', 'missing-document-url');
    authorize(callerOf(req, node), resourceOf(node), 'versions');
    const choice = body.choice as Choice;
    if (!CHOICES.includes(choice)) return refuse(reply, 400, 'choice must be dismiss | revert | restore', 'invalid');
    const id = req.params.id || (typeof body.id === 'string' ? body.id : null);
    const by = { kind: 'restore' as const, accountId: req.actor?.accountId ?? null, writer: req.actor?.writer ?? null };
    try {
      return await s.guard.resolve(node, id, choice, by.writer, (bytes, ifMatch) =>
        saveDocument(s, { nodeId: node.id, bytes, by, ifMatch: exactly(ifMatch) }),
      );
    } catch (err) {
      // The panel shows `error` in its toast.
      if (err instanceof KilnError) return refuse(reply, err.status, err.message, err.code ?? 'invalid');
      throw err;
    }
  });
};

/** The panel reads `error`; Kiln's clients read `msg` and `code`: both. */
function refuse(reply: FastifyReply, status: number, error: string, code: string) {
  return reply.code(status).send({ error, msg: error, msgType: 'error', code });
}

/** The document a request names (`file`, else the Page-URL header) on this host, or null. */
async function documentNamed(s: Services, req: FastifyRequest, bodyFile?: unknown): Promise<NodeRow | null> {
  if (req.site.kind === 'main') return null;
  const query = (req.query ?? {}) as Record<string, unknown>;
  const header = req.headers['page-url'];
  const url = [query.file, bodyFile, Array.isArray(header) ? header[0] : header].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  if (!url) return null;
  try {
    const { host, path } = documentPathOf(url);
    if (host !== (req.headers.host ?? '').toLowerCase()) return null;
    const node = await findByPath(s, req.site.accountId, path);
    return node?.type === 'site' ? node : null;
  } catch {
    return null;
  }
}

export default plugin;
