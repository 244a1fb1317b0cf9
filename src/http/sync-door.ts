// The sync doors' first step (the API, its stream, its control lane): every route of a plugin that calls
// `syncDoor` takes a sync key (`config.keys`: the auth hook resolves it into `req.caller`), and the request's
// scope (src/sync/scope.ts: the account whose tree it acts on, from the caller and the protocol-2 headers) is
// made once, before the body is read (`preParsing`): a request without a valid key is refused with its 401
// before its (up to 150 MB) body is parsed or its schemas judge it. Handlers hand `syncCtx(req)` to the use
// case: the request's ctx with the scope on it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Ctx } from '../context.ts';
import { syncContext, syncScope, type SyncDoorOptions, type SyncScope } from '../sync/scope.ts';

const scopes = new WeakMap<FastifyRequest, SyncScope>();

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
}

/** Call first in a sync plugin, before its routes (`syncKeysOnly`: the stream and the control lane). */
export function syncDoor(app: FastifyInstance, door: SyncDoorOptions = {}): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), keys: true };
  });
  app.addHook('preParsing', async (req) => {
    const team = (req.params as Record<string, string | undefined> | undefined)?.team || undefined;
    const headers = { protocol: header(req, 'x-sync-protocol'), accountId: header(req, 'x-sync-account-id') };
    scopes.set(req, await syncScope(req.ctx, team, headers, door));
  });
}

/** The request's ctx with its sync scope (`ctx.sync`), reaching the scope's tree only (src/sync/scope.ts). */
export function syncCtx(req: FastifyRequest): Ctx & { sync: SyncScope } {
  const sync = scopes.get(req);
  if (!sync) throw new Error(`${req.url}: a sync route outside syncDoor`);
  return syncContext(req.ctx, sync);
}
