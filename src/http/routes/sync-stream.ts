// GET /_/sync/stream and GET /_/team/<team>/sync/stream — every change to an account's files, as
// server-sent events, for key holders (the desktop sync engine, agents). Frames are unnamed `data:`
// JSON with a `type` (node-saved, node-renamed, node-moved, node-deleted, live-sync), each with an
// `id:`; a reconnect with Last-Event-ID replays what was missed, or, when the replay log no longer
// covers it (a restart), gets one `{"type":"resync"}` frame: list the account again. Protocol 2 (`X-Sync-Protocol: 2`)
// streams start with `sync-ready`. Every stream gets `: ping` plus an unnamed `{"type":"ping"}`
// frame each keep-alive period (the desktop watchdog counts only data frames as activity).
// A stream ends when its key is revoked, and a team stream also when its holder is removed from the
// team or made a viewer (grants `key:<id>` and `member:<team>:<person>`, src/events/revocations.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { HttpServices } from '../services.ts';
import type { Services } from '../../services.ts';
import { scopeStillHeld, syncKeyIdOf, type SyncScope } from '../../sync/scope.ts';
import { channels } from '../../events/bus.ts';
import { SseStream, eventFrame } from '../../sse/stream.ts';
import { takeStreamSlot } from '../../sse/slots.ts';
import { SYNC_PING, syncStreamViewFor } from '../../sse/views.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';
import { grants } from '../../events/revocations.ts';
import { keyValidUntil } from '../../sync/keys.ts';
import { onlyOn } from '../hosts.ts';
import { syncCtx, syncDoor } from '../sync-door.ts';
import { z } from 'zod';

/** The stream reads nothing but its base (and the key, the protocol-2 headers, Last-Event-ID). */
const params = z.object({ team: z.string().optional() });

const plugin: RoutePlugin = async (app, { services: s }) => {
  syncDoor(app, { syncKeysOnly: true });
  onlyOn(app, 'main', 'The sync API is on the main address of this Kiln.');
  const hub = s.hub;
  app.addHook('preClose', async () => hub.closeAll());

  // Key, account and role checks are the sync API's (src/sync/scope.ts, made by syncDoor): 401 for keys; on
  // the team base 428 account-identity-required, 404 not-found, 409 account-changed, 403 viewer; on the
  // personal base 409 account-changed when X-Sync-Account-ID names another account.
  for (const url of ['/_/sync/stream', '/_/team/:team/sync/stream'])
    app.get(url, { schema: { params } }, async (req, reply) => openStream(s, req, reply, syncCtx(req).sync));
};

/** Opens the account's stream. Protocol 2 (always on a team base) starts with `sync-ready`: the
 *  account id and whether its plan includes syncing (the same `sync` as GET /_/sync/accounts). */
async function openStream(s: HttpServices, req: FastifyRequest, reply: FastifyReply, scope: SyncScope) {
  const accountId = scope.account.id;
  const sync = scope.canWrite ? { enabled: true, reason: null } : { enabled: false, reason: 'payment-required' };
  const keyId = syncKeyIdOf(scope);
  takeStreamSlot(s, req, reply);
  reply.hijack();
  const stream = new SseStream(reply.raw, SYNC_PING);
  const held = [grants.key(keyId)];
  if (scope.account.kind === 'team') held.push(grants.member(scope.account.id, scope.actor.accountId));
  await s.hub.attach(channels.account(accountId), stream, {
    view: syncStreamViewFor(keyId),
    lastEventId: lastEventIdOf(req),
    preamble: scope.protocol === 2 ? [eventFrame(null, { type: 'sync-ready', accountId, sync })] : [],
    // A resume the replay log cannot cover (events lost in a restart of Kiln or Redis): never silent.
    // The client should list the account again (GET <base>/nodes) to catch up.
    onGap: async (id) => ({ id, frame: eventFrame(id, { type: 'resync', reason: 'events-missed' }) }),
    grants: held,
  });
  // A revocation committed between the scope check and the subscription was not heard: look again.
  if (!stream.closed && !(await stillHeld(s, scope, stream))) stream.close();
  if (!stream.closed) await closeAtExpiry(s, scope, stream, keyId);
}

const DAY_MS = 24 * 60 * 60_000;

/** The stream ends when its key expires (revocation ends it through the hub): a timer set for the
 *  key's expiry (at most a day ahead, then set again) checks the key and closes the stream. */
async function closeAtExpiry(s: Services, scope: SyncScope, stream: SseStream, keyId: number) {
  const arm = async () => {
    const until = await keyValidUntil(s, keyId).catch(() => 'unknown');
    if (stream.closed) return;
    if (until === null) return stream.close();
    const left = until === 'unknown' ? 60_000 : Date.parse(until) - s.clock.now().getTime();
    const timer = setTimeout(
      () => {
        void (async () => {
          if (stream.closed) return;
          if (!(await stillHeld(s, scope, stream))) stream.close();
          else await arm();
        })();
      },
      Math.max(0, Math.min(left, DAY_MS)),
    );
    timer.unref();
    stream.onClose(() => clearTimeout(timer));
  };
  await arm();
}

/** The key is still active and, on a team base, its holder still an owner or editor of the team. */
async function stillHeld(s: Services, scope: SyncScope, stream: SseStream): Promise<boolean> {
  try {
    return await scopeStillHeld(s, scope);
  } catch (err) {
    // A stream closed meanwhile (the process stopping: its database goes) has nobody to tell.
    if (!stream.closed) console.error('re-checking a sync stream’s key failed:', err);
    return false;
  }
}

export default plugin;
