// GET /_/meta — host discovery for the browser library: `spec` + `extensions` tell hyperclayjs to use
// Kiln's /_/sync live lanes; the `document` block describes the document named by Document-URL.
// GET /_/data-loss — hyperclayjs's data-clobber guard asks on every page load in edit mode. Kiln keeps
// every save as a version instead of detecting clobbered island data, so there is never an event to
// show: `{event: null}`, and resolving an event answers 404.
import type { RoutePlugin } from './index.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { findByPath } from '../../nodes/tree.ts';
import { allows, resourceOf } from '../../access/authorize.ts';
import { limits } from '../../limits.ts';
import { notFound } from '../../errors.ts';
import { effectivePlan, uploadLimit } from '../../billing/plans.ts';
import { planRow } from '../../store/accounts.ts';
import { callerOf } from '../share-grant.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/meta', async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    // `format`: `<html formathtml="true">` documents are re-indented on save; `conditional`: saves take
    // If-Match and answer 412 on a stale one (hyperclay-local's host conformance page asks for both).
    const answer: Record<string, unknown> = { spec: 1, extensions: ['sync', 'upload', 'format', 'conditional'] };
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
            const owner = await planRow(s.database.db, node.owner_id);
            const ownerPlan = owner
              ? effectivePlan({ plan: owner.plan, hasActiveSubscription: owner.has_active_subscription === 1 })
              : 'free';
            answer.document = {
              writable,
              etag: node.checksum,
              maxBytes: limits.documentSize,
              // Whether this caller may upload beside the page (the access table: a share guest may save
              // but not upload), and the file size uploads are held to: its owner's plan's, a fact
              // stated to every reader (hyperclay-local's host conformance page reads it).
              upload: { allowed: allows(caller, resourceOf(node), 'upload'), maxBytes: uploadLimit(s, ownerPlan) },
            };
          }
        }
      } catch {
        // A malformed Document-URL only means no document block.
      }
    }
    return answer;
  });

  app.get('/_/data-loss', { config: { host: 'document', answers: 'json' } }, async (_req, reply) =>
    reply.header('Cache-Control', 'no-store').send({ event: null }),
  );
  app.post('/_/data-loss/:id', { config: { host: 'document', answers: 'json' } }, async () => {
    throw notFound('No such data-loss event: Kiln keeps every save as a version instead (see Versions).');
  });
};
export default plugin;
