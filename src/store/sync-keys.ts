// The sync keys store: keys by hash (only a hash is kept), their use and revocation, an account's list.
// (What a key is and who may have one: src/sync/keys.ts.)
import type { Executor, NewRow } from './schema.ts';

/** Stores a new key; returns its id. */
export async function insertSyncKey(db: Executor, values: NewRow<'sync_keys'>): Promise<number> {
  const row = await db.insertInto('sync_keys').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** The key with this hash (what checking a sent key needs), or undefined. */
export function syncKeyByHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('sync_keys')
    .select(['id', 'account_id', 'expires_at', 'revoked_at', 'last_used_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Records when a key was last used. */
export async function touchSyncKey(db: Executor, keyId: number, at: string): Promise<void> {
  await db.updateTable('sync_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
}

/** When a key was revoked and when it expires, or undefined when there is no such key. */
export function syncKeyTimes(db: Executor, keyId: number) {
  return db.selectFrom('sync_keys').select(['revoked_at', 'expires_at']).where('id', '=', keyId).executeTakeFirst();
}

/** Revokes an active key of the account; false when it has none such. */
export async function revokeKey(db: Executor, accountId: number, keyId: number, at: string): Promise<boolean> {
  const r = await db
    .updateTable('sync_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The account's keys, newest first (never their hashes). */
export function syncKeysOf(db: Executor, accountId: number) {
  return db
    .selectFrom('sync_keys')
    .select(['id', 'key_prefix', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .execute();
}
