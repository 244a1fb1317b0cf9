// Sync keys: `hcsk_` + 64 hex (32 random bytes), shown once; only a SHA-256 hash is kept; one year.
import type { Services } from '../services.ts';
import type { Actor } from '../http/context.ts';
import { randomHex } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { unauthorized } from '../errors.ts';
import { limits } from '../limits.ts';
import { actorForAccount } from '../accounts/actors.ts';

export const KEY_PREFIX = 'hcsk_';
const KEY_SHAPE = /^hcsk_[0-9a-f]{64}$/;

/** Creates a key for an account. The raw key is returned once and never stored. */
export async function createSyncKey(s: Services, accountId: number): Promise<{ key: string; id: number; prefix: string; expiresAt: string }> {
  const key = KEY_PREFIX + randomHex(32);
  const now = s.clock.now();
  const expiresAt = new Date(now.getTime() + limits.syncKeyLifetimeMs).toISOString();
  const prefix = key.slice(0, 12);
  const row = await s.database.db
    .insertInto('sync_keys')
    .values({ account_id: accountId, key_hash: sha256(key), key_prefix: prefix, created_at: now.toISOString(), expires_at: expiresAt, revoked_at: null, last_used_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, id: row.id, prefix, expiresAt };
}

/** The person behind an `X-API-Key` header, or 401 (missing, not `hcsk_`, unknown, expired, revoked). */
export async function actorForSyncKey(s: Services, header: string | string[] | undefined): Promise<Actor> {
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw unauthorized('Send your sync key in the X-API-Key header.', 'missing-key');
  if (!key.startsWith(KEY_PREFIX)) throw unauthorized('Sync keys start with hcsk_.', 'invalid-key');
  if (!KEY_SHAPE.test(key)) throw unauthorized('That sync key is not valid.', 'invalid-key');
  const row = await s.database.db
    .selectFrom('sync_keys')
    .select(['id', 'account_id', 'expires_at', 'revoked_at'])
    .where('key_hash', '=', sha256(key))
    .executeTakeFirst();
  if (!row) throw unauthorized('That sync key is not valid.', 'invalid-key');
  if (row.revoked_at !== null) throw unauthorized('That sync key was revoked.', 'revoked-key');
  if (row.expires_at <= s.clock.now().toISOString()) throw unauthorized('That sync key has expired; generate a new one in the dashboard.', 'expired-key');
  const actor = await actorForAccount(s.database.db, row.account_id, `key:${row.id}`);
  if (!actor) throw unauthorized('That sync key is not valid.', 'invalid-key');
  return actor;
}

export async function revokeSyncKey(s: Services, accountId: number, keyId: number): Promise<boolean> {
  const r = await s.database.db
    .updateTable('sync_keys')
    .set({ revoked_at: s.clock.now().toISOString() })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
