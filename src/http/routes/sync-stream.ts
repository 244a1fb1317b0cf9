// GET /_/sync/stream and GET /_/team/<team>/sync/stream — every change to an account's files, as
// server-sent events, for key holders (the desktop sync engine, agents). Frames are unnamed `data:`
// JSON with a `type` (node-saved, node-renamed, node-moved, node-deleted, live-sync), each with an
// `id:`; a reconnect with Last-Event-ID replays what was missed. Protocol 2 (`X-Sync-Protocol: 2`)
// streams start with `sync-ready`. Every stream gets `: ping` plus an unnamed `{"type":"ping"}`
// frame each keep-alive period (the desktop watchdog counts only data frames as activity).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './index.ts';
import type { Services } from '../../services.ts';
import { KilnError } from '../../errors.ts';
import { syncScope, type SyncScope } from '../../sync/scope.ts';
import { channels } from '../../events/bus.ts';
import { hubFor } from '../../sse/hub.ts';
import { SseStream, eventFrame } from '../../sse/stream.ts';
import { SYNC_PING, syncStreamView } from '../../sse/views.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  const hub = hubFor(s);
  app.addHook('preClose', async () => hub.closeAll());

  // Key, account and role checks are the sync API's (src/sync/scope.ts): 401 for keys; on the team
  // base 428 account-identity-required, 404 not-found, 409 account-changed, 403 viewer; on the
  // personal base 409 account-changed when X-Sync-Account-ID names another account.
  app.get('/_/sync/stream', async (req, reply) => openStream(s, req, reply, await scopeOf(s, req)));
  app.get<{ Params: { team: string } }>('/_/team/:team/sync/stream', async (req, reply) => openStream(s, req, reply, await scopeOf(s, req, req.params.team)));
};

async function scopeOf(s: Services, req: FastifyRequest, team?: string): Promise<SyncScope> {
  if (req.site.kind !== 'main') throw new KilnError(404, 'The sync API is on the main address of this Kiln.', 'not-found');
  return syncScope(s, req, team);
}

/** Opens the account's stream. Protocol 2 (always on a team base) starts with `sync-ready`: the
 *  account id and whether its plan includes syncing (the same `sync` as GET /_/sync/accounts). */
async function openStream(s: Services, req: FastifyRequest, reply: FastifyReply, scope: SyncScope) {
  const accountId = scope.account.id;
  const sync = scope.canWrite ? { enabled: true, reason: null } : { enabled: false, reason: 'payment-required' };
  reply.hijack();
  const stream = new SseStream(reply.raw, SYNC_PING);
  await hubFor(s).attach(channels.account(accountId), stream, {
    view: syncStreamView,
    lastEventId: lastEventIdOf(req),
    preamble: scope.protocol === 2 ? [eventFrame(null, { type: 'sync-ready', accountId, sync })] : [],
  });
}

export default plugin;
