// GET /_/meta — host discovery for the browser library: `spec` + `extensions` tell hyperclayjs to use
// Kiln's /_/sync live lanes; the `document` block describes the document named by Document-URL.
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { findByPath } from '../../nodes/find.ts';
import { allows, resourceOf } from '../../access/authorize.ts';
import { limits } from '../../limits.ts';
import { effectivePlan, uploadLimit } from '../../billing/plans.ts';
import { planRow } from '../../store/accounts.ts';
import { callerOf } from '../share-grant.ts';
import { EVENT_DAYS } from '../../guard/guard.ts';

/** What every host says of itself. `format`: `<html formathtml="true">` documents are re-indented on
 *  save; `conditional`: saves take If-Match and answer 412 on a stale one (hyperclay-local's host
 *  conformance page asks for both). `data-loss`: the data-clobber guard (GET /_/data-loss, POST
 *  /_/data-loss/<id>, `Save-Trigger`). `bus`: the host's message bus for its owner (src/bus), what a send's
 *  `delivered` counts, and whether Kiln itself answers AI edit requests. */
function discovery(s: Services) {
  return {
    spec: 1,
    extensions: ['sync', 'upload', 'format', 'conditional', 'data-loss', 'bus'],
    dataLoss: {
      events: '/_/data-loss',
      saveTrigger: ['user', 'auto'],
      choices: ['restore', 'revert', 'dismiss'],
      keptDays: EVENT_DAYS,
      control: '/_/sync/control',
    },
    bus: {
      subscribe: '/_/bus/subscribe',
      send: '/_/bus/send',
      maxBytes: limits.bus.messageBytes,
      // A send's `delivered` counts the subscribers of the process that took it, not those of the others
      // (which hear it through Redis). Counting them all would need a shared tally of open streams, kept
      // right through a process that dies holding some, and a Redis round trip per send; no client reads
      // the count (hyperclayjs waits for a handler's ack instead).
      deliveredCounts: 'process',
      aiEdit: {
        builtIn: s.aiEdit.on,
        engines: s.aiEdit.list().map((e) => ({ name: e.name, default: e.isDefault })),
        agent: 'npx kiln ai-edit serve',
      },
    },
  };
}

/** The `document` block: the document named by Document-URL on this document host, as far as the
 *  caller may see it; undefined otherwise (withheld by omission). */
async function documentBlock(s: Services, req: FastifyRequest) {
  const url = documentUrlHeader(req.headers);
  if (!url || req.site.kind === 'main') return undefined;
  try {
    const { host, path } = documentPathOf(url);
    const node =
      host === (req.headers.host ?? '').toLowerCase() ? await findByPath(s, req.site.accountId, path) : undefined;
    if (node?.type !== 'site') return undefined;
    const caller = callerOf(req, node);
    if (!allows(caller, resourceOf(node), 'view')) return undefined;
    const owner = await planRow(s.database.db, node.owner_id);
    const ownerPlan = owner
      ? effectivePlan({ plan: owner.plan, hasActiveSubscription: owner.has_active_subscription === 1 })
      : 'free';
    return {
      writable: allows(caller, resourceOf(node), 'save'),
      etag: node.checksum,
      maxBytes: limits.documentSize,
      // Whether this caller may upload beside the page (the access table: a share guest may save but
      // not upload), and the file size uploads are held to: its owner's plan's, a fact stated to every
      // reader (hyperclay-local's host conformance page reads it).
      upload: { allowed: allows(caller, resourceOf(node), 'upload'), maxBytes: uploadLimit(s, ownerPlan) },
    };
  } catch {
    // A malformed Document-URL only means no document block.
    return undefined;
  }
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/meta', async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    const document = await documentBlock(s, req);
    return document ? { ...discovery(s), document } : discovery(s);
  });
};
export default plugin;
