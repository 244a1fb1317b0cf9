// GET /_/meta — host discovery for the browser library: `spec` + `extensions` tell hyperclayjs to use
// Kiln's /_/sync live lanes; the `document` block describes the document named by Document-URL.
import type { RoutePlugin } from './index.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { findByPath } from '../../nodes/tree.ts';
import { allows, resourceOf } from '../../access/authorize.ts';
import { limits } from '../../limits.ts';
import { callerOf } from '../share-grant.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/meta', async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    const answer: Record<string, unknown> = { spec: 1, extensions: ['sync', 'upload'] };
    const url = documentUrlHeader(req.headers);
    if (url && req.site.kind !== 'main') {
      try {
        const { host, path } = documentPathOf(url);
        const node =
          host === (req.headers.host ?? '').toLowerCase() ? await findByPath(s, req.site.accountId, path) : undefined;
        if (node && node.type === 'site') {
          const caller = callerOf(req, node);
          const writable = allows(caller, resourceOf(node), 'save');
          // Withheld by omission: a document the caller may not see is not described.
          if (allows(caller, resourceOf(node), 'view')) {
            answer.document = {
              writable,
              maxBytes: limits.documentSize,
              upload: { allowed: writable, maxBytes: req.actor ? limits.uploadSize[req.actor.plan] : 0 },
            };
          }
        }
      } catch {
        // A malformed Document-URL only means no document block.
      }
    }
    return answer;
  });
};
export default plugin;
