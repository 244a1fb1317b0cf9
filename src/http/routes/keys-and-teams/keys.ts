// Sync keys: the page, generating one (shown once), revoking one.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import type { Services } from '../../../services.ts';
import { notFound } from '../../../errors.ts';
import { generateSyncKey, listSyncKeys, revokeSyncKey, type SyncKeyInfo } from '../../../sync/keys.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { keysPage } from '../../../ui/keys.ts';
import { backWithRefusal, queryMsg, wantsHtml } from '../../io.ts';
import { nodeParams } from '../dashboard/shared.ts';
import { queries } from './schemas.ts';
import { KEYS, developer, operate } from './shared.ts';

const NEW_KEY_COOKIE = 'kiln_new_key';
const NEW_KEY_MSG = 'Sync key generated. Copy it now: it is shown only once.';

type NewKey = Awaited<ReturnType<typeof generateSyncKey>>;

/** The key the cookie carries, when it is one of the account's active keys. */
function newKeyOf(req: FastifyRequest, keys: SyncKeyInfo[]) {
  const raw = req.cookies[NEW_KEY_COOKIE];
  const m = raw ? /^(\d{1,15})\.(hcsk_[0-9a-f]{64})$/.exec(raw) : null;
  if (!m) return undefined;
  const listed = keys.find((k) => k.id === Number(m[1]) && k.state === 'active' && m[2].startsWith(k.prefix));
  return listed ? { key: m[2], prefix: listed.prefix, expiresAt: listed.expiresAt } : undefined;
}

/** A new key: JSON for programs; browsers go back to the page (POST-redirect-GET, so a reload never
 *  generates a second key). The key cannot travel in the URL (history, logs): it waits in a short-lived
 *  httpOnly cookie scoped to the keys page. */
function presentNewKey(s: Services, req: FastifyRequest, reply: FastifyReply, made: NewKey) {
  reply.header('cache-control', 'no-store');
  if (!wantsHtml(req)) {
    const { key, id, prefix, expiresAt } = made;
    return reply.code(201).send({ msg: NEW_KEY_MSG, msgType: 'success', key, id, prefix, expiresAt });
  }
  reply.setCookie(NEW_KEY_COOKIE, `${made.id}.${made.key}`, {
    path: KEYS,
    httpOnly: true,
    sameSite: 'strict',
    secure: s.config.secure,
    maxAge: 120,
  });
  return reply.redirect(KEYS, 303);
}

const syncKeys: RoutePlugin = async (app, { services: s }) => {
  app.get(KEYS, { schema: { querystring: queries.keys } }, async (req, reply) => {
    const actor = developer(req, false);
    const keys = await listSyncKeys(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', keys });
    const { tab } = req.query;
    // A key generated a moment ago, shown once: the cookie is cleared by this very answer.
    const fresh = newKeyOf(req, keys);
    if (req.cookies[NEW_KEY_COOKIE] !== undefined) reply.clearCookie(NEW_KEY_COOKIE, { path: KEYS });
    const msg = fresh ? { text: NEW_KEY_MSG, type: 'success' } : queryMsg(req);
    return reply
      .type('text/html; charset=utf-8')
      .send(keysPage({ username: actor.username, keys, tab, newKey: fresh, msg }));
  });

  app.post(KEYS, { schema: { body: z.unknown() } }, async (req, reply) => {
    let made: NewKey;
    try {
      const actor = developer(req, true);
      await strictAttempt(s, req, reply, 'sync-key');
      made = await generateSyncKey(s, actor.accountId);
    } catch (err) {
      const back = backWithRefusal(req, reply, err, KEYS);
      if (back) return back;
      throw err;
    }
    return presentNewKey(s, req, reply, made);
  });

  const revoke = { schema: { params: nodeParams, body: z.unknown() }, attachValidation: true };
  app.post(`${KEYS}/:id/revoke`, revoke, (req, reply) =>
    operate(req, reply, KEYS, async (_ctx, actor) => {
      const { id } = req.params;
      const key = (await listSyncKeys(s, actor.accountId)).find((k) => k.id === id);
      if (!key) throw notFound('No such key.');
      if (key.state !== 'active') return { msg: `The key ${key.prefix}… was already ${key.state}.` };
      await revokeSyncKey(s, actor.accountId, id);
      return { msg: `Revoked the key ${key.prefix}…; tools using it can no longer sync.` };
    }),
  );
};

export default syncKeys;
