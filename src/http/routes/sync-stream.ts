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
import { actorForSyncKey } from '../../sync/keys.ts';
import { findTeam, planIncludesSync, roleIn } from '../../teams/teams.ts';
import { channels } from '../../events/bus.ts';
import { hubFor } from '../../sse/hub.ts';
import { SseStream, eventFrame } from '../../sse/stream.ts';
import { SYNC_PING, syncStreamView } from '../../sse/views.ts';
import { lastEventIdOf } from '../../sse/last-event-id.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  const hub = hubFor(s);
  app.addHook('preClose', async () => hub.closeAll());

  app.get('/_/sync/stream', async (req, reply) => {
    const actor = await actorForSyncKey(s, req.headers['x-api-key']);
    const protocol = protocolOf(req);
    const claimed = accountIdHeader(req);
    if (protocol === 2 && claimed !== null && claimed !== actor.accountId) {
      throw new KilnError(409, 'X-Sync-Account-ID names another account than this key’s.', 'account-changed');
    }
    await openStream(s, req, reply, actor.accountId, protocol, syncState(planIncludesSync(actor)));
  });

  app.get<{ Params: { team: string } }>('/_/team/:team/sync/stream', async (req, reply) => {
    const actor = await actorForSyncKey(s, req.headers['x-api-key']);
    const claimed = accountIdHeader(req);
    if (protocolOf(req) !== 2 || claimed === null) {
      throw new KilnError(428, 'Team sync needs the headers X-Sync-Protocol: 2 and X-Sync-Account-ID.', 'account-identity-required');
    }
    const team = await findTeam(s, req.params.team);
    const role = team ? await roleIn(s, team.id, actor.accountId) : undefined;
    if (!team || !role) throw new KilnError(404, 'No such team.', 'not-found');
    if (claimed !== team.id) throw new KilnError(409, 'X-Sync-Account-ID names another account than this team.', 'account-changed');
    if (role === 'viewer') throw new KilnError(403, 'Viewers of a team cannot sync its files.', 'viewer');
    await openStream(s, req, reply, team.id, 2, syncState(planIncludesSync(team)));
  });
};

function protocolOf(req: FastifyRequest): 1 | 2 {
  const v = req.headers['x-sync-protocol'];
  return (Array.isArray(v) ? v[0] : v)?.trim() === '2' ? 2 : 1;
}

function accountIdHeader(req: FastifyRequest): number | null {
  const raw = req.headers['x-sync-account-id'];
  const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return v && /^\d{1,15}$/.test(v) ? Number(v) : null;
}

/** The `sync` of `sync-ready` (same meaning as in GET /_/sync/accounts): whether the account's plan
 *  includes syncing. */
function syncState(enabled: boolean): { enabled: boolean; reason: string | null } {
  return enabled ? { enabled: true, reason: null } : { enabled: false, reason: 'payment-required' };
}

async function openStream(
  s: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  accountId: number,
  protocol: 1 | 2,
  sync: { enabled: boolean; reason: string | null },
) {
  reply.hijack();
  const stream = new SseStream(reply.raw, SYNC_PING);
  await hubFor(s).attach(channels.account(accountId), stream, {
    view: syncStreamView,
    lastEventId: lastEventIdOf(req),
    preamble: protocol === 2 ? [eventFrame(null, { type: 'sync-ready', accountId, sync })] : [],
  });
}

export default plugin;
