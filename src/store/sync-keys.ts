// The sync keys store: keys by hash (only a hash is kept), an account's list (their use and revocation, as an
// agent key's: src/store/key-rows.ts).
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

/** When a key was revoked and when it expires, or undefined when there is no such key. */
export function syncKeyTimes(db: Executor, keyId: number) {
  return db.selectFrom('sync_keys').select(['revoked_at', 'expires_at']).where('id', '=', keyId).executeTakeFirst();
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
