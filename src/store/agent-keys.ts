// The agent keys store: keys by hash (only a hash is kept), a person's list (their use and revocation, as a sync
// key's: src/store/key-rows.ts).
// (What an agent key is, who may make one and what it reaches: src/agents/keys.ts.)
import type { Executor, NewRow } from './schema.ts';

/** Stores a new key; returns its id. */
export async function insertAgentKey(db: Executor, values: NewRow<'agent_keys'>): Promise<number> {
  const row = await db.insertInto('agent_keys').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Keys with the account each reaches and their folder's node (`f`), for the columns below. */
const withReach = (db: Executor) =>
  db
    .selectFrom('agent_keys')
    .innerJoin('accounts', 'accounts.id', 'agent_keys.scope_account_id')
    .leftJoin('nodes as f', 'f.id', 'agent_keys.folder_id');

/** Where a key's folder is now (its node, joined as `f`): its parent's path, name, owner, and whether it is in
 *  the trash. */
const FOLDER_NOW = [
  'f.path as folder_path',
  'f.name as folder_name',
  'f.owner_id as folder_owner',
  'f.trashed_at as folder_trashed_at',
] as const;

/** The key with this hash (what checking a sent key needs), with the username of the account it reaches and
 *  where its folder is now, or undefined. */
export function agentKeyByHash(db: Executor, keyHash: string) {
  return withReach(db)
    .select([
      ...FOLDER_NOW,
      'agent_keys.id',
      'agent_keys.account_id',
      'agent_keys.name',
      'agent_keys.read_only',
      'agent_keys.scope_account_id',
      'agent_keys.folder',
      'agent_keys.expires_at',
      'agent_keys.revoked_at',
      'agent_keys.last_used_at',
      'accounts.kind as scope_kind',
      'accounts.username as scope_username',
    ])
    .where('agent_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** The person's keys, newest first (never their hashes), with the username of the account each reaches and
 *  where its folder is now. */
export function agentKeysOf(db: Executor, accountId: number) {
  return withReach(db)
    .select([
      ...FOLDER_NOW,
      'agent_keys.id',
      'agent_keys.name',
      'agent_keys.key_prefix',
      'agent_keys.read_only',
      'agent_keys.scope_account_id',
      'agent_keys.folder',
      'agent_keys.created_at',
      'agent_keys.expires_at',
      'agent_keys.last_used_at',
      'agent_keys.revoked_at',
      'accounts.kind as scope_kind',
      'accounts.username as scope_username',
    ])
    .where('agent_keys.account_id', '=', accountId)
    .orderBy('agent_keys.id', 'desc')
    .execute();
}

/** How many of the person's keys are neither revoked nor expired (the bound on how many they may hold). */
export async function activeAgentKeyCount(db: Executor, accountId: number, now: string): Promise<number> {
  const r = await db
    .selectFrom('agent_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The key's name and its person's username, for naming the writer of a change (`akey:<id>`). */
export function agentKeyWriter(db: Executor, keyId: number) {
  return db
    .selectFrom('agent_keys')
    .innerJoin('accounts', 'accounts.id', 'agent_keys.account_id')
    .select(['accounts.username', 'agent_keys.name', 'agent_keys.key_prefix'])
    .where('agent_keys.id', '=', keyId)
    .executeTakeFirst();
}
