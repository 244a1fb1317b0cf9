// Sync keys: `hcsk_` + 64 hex (32 random bytes), shown once; only a SHA-256 hash is kept; one year.
import { inPaidTeamAs, personRow } from '../store/accounts.ts';
import { insertSyncKey, syncKeyByHash, syncKeyTimes, syncKeysOf } from '../store/sync-keys.ts';
import { revokeKeyRow, touchKeyRow } from '../store/key-rows.ts';
import type { Database } from '../store/db.ts';
import type { StreamHub } from '../sse/hub.ts';
import type { EventBus } from '../events/bus.ts';
import type { Actor } from '../access/actor.ts';
import { randomHex, type Clock } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { KilnError, badRequest, forbidden, notFound, unauthorized } from '../errors.ts';
import { limits, MINUTE } from '../limits.ts';
import { actorOfPerson } from '../accounts/actors.ts';
import { planIncludesSync, TEAM_ROLES } from '../teams/teams.ts';
import { allowsTeam } from '../access/authorize.ts';
import { grants, revokeGrants } from '../events/revocations.ts';

/** What sync keys use of the services, part by part (the bus checks keys here, so this does not import
 *  src/services.ts): revoking one takes the hub and the event bus. */
export interface KeyPorts {
  database: Database;
  clock: Clock;
  hub: StreamHub;
  events: EventBus;
}

const KEY_PREFIX = 'hcsk_';
const KEY_SHAPE = /^hcsk_[0-9a-f]{64}$/;
/** The team roles that may sync a team's files (the access table's `team_*:team:sync` rows). */
const SYNC_ROLES = TEAM_ROLES.filter((role) => allowsTeam(role, 'sync'));

/** Creates a key for an account. The raw key is returned once and never stored. */
export async function createSyncKey(
  s: KeyPorts,
  accountId: number,
): Promise<{ key: string; id: number; prefix: string; expiresAt: string }> {
  const key = KEY_PREFIX + randomHex(32);
  const now = s.clock.now();
  const expiresAt = new Date(now.getTime() + limits.syncKeyLifetimeMs).toISOString();
  const prefix = key.slice(0, 12);
  const id = await insertSyncKey(s.database.db, {
    account_id: accountId,
    key_hash: sha256(key),
    key_prefix: prefix,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    revoked_at: null,
    last_used_at: null,
  });
  return { key, id, prefix, expiresAt };
}

/** The person behind an `X-API-Key` header, or 401 (missing, not `hcsk_`, unknown, expired, revoked). */
export async function actorForSyncKey(
  s: Pick<KeyPorts, 'database' | 'clock'>,
  header: string | string[] | undefined,
): Promise<Actor> {
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw unauthorized('Send your sync key in the X-API-Key header.', 'missing-key');
  if (!key.startsWith(KEY_PREFIX)) throw unauthorized('Sync keys start with hcsk_.', 'invalid-key');
  if (!KEY_SHAPE.test(key)) throw unauthorized('That sync key is not valid.', 'invalid-key');
  const row = await syncKeyByHash(s.database.db, sha256(key));
  if (!row) throw unauthorized('That sync key is not valid.', 'invalid-key');
  if (row.revoked_at !== null) throw unauthorized('That sync key was revoked.', 'revoked-key');
  const now = s.clock.now();
  if (row.expires_at <= now.toISOString())
    throw unauthorized('That sync key has expired; generate a new one in the dashboard.', 'expired-key');
  // One read of the person serves both answers (every sync request comes through here).
  const person = await personRow(s.database.db, { id: row.account_id });
  if (person?.suspended_at)
    throw forbidden('This account is suspended; its sync keys do not work.', 'account-suspended');
  const actor = person && actorOfPerson(person, `key:${row.id}`);
  if (!actor) throw unauthorized('That sync key is not valid.', 'invalid-key');
  // "Last used" for the dashboard, written at most once a minute per key (not a write per request).
  if (row.last_used_at === null || Date.parse(row.last_used_at) < now.getTime() - MINUTE) {
    void touchKeyRow(s.database.db, 'sync_keys', row.id, now.toISOString()).catch(() => {});
  }
  return actor;
}

/** True while the key is neither revoked nor expired (open streams re-check it). */
export async function keyStillValid(s: KeyPorts, keyId: number): Promise<boolean> {
  return (await keyValidUntil(s, keyId)) !== null;
}

/** When a valid key expires (ISO time), or null when it is revoked, expired or gone. */
export async function keyValidUntil(s: KeyPorts, keyId: number): Promise<string | null> {
  const key = await syncKeyTimes(s.database.db, keyId);
  return key && key.revoked_at === null && key.expires_at > s.clock.now().toISOString() ? key.expires_at : null;
}

export async function revokeSyncKey(s: KeyPorts, accountId: number, keyId: number): Promise<boolean> {
  const revoked = await revokeKeyRow(s.database.db, 'sync_keys', accountId, keyId, s.clock.now().toISOString());
  if (revoked) await revokeGrants(s, [grants.key(keyId)]);
  return revoked;
}

// ------------------------------------------------------------------ who may generate, listing

export const PAYMENT_REQUIRED_MSG =
  'Syncing needs a paid plan: upgrade your account to Personal or Maker, or ask the owner of a team with a paid plan to make you an owner or editor of it.';

/** 402 `payment-required` when generating a key is not allowed: the account needs a paid plan of its
 *  own, or an owner/editor role on a team whose plan includes sync. */
export async function assertMayGenerateKey(s: KeyPorts, accountId: number): Promise<void> {
  const { db } = s.database;
  const me = await personRow(db, { id: accountId });
  if (!me) throw notFound('No such account.');
  if (me.account_type !== 'dev') throw badRequest('Sync keys are for developer accounts.', 'not-developer');
  if (planIncludesSync(me)) return;
  if (await inPaidTeamAs(db, accountId, SYNC_ROLES)) return;
  throw new KilnError(402, PAYMENT_REQUIRED_MSG, 'payment-required');
}

/** Generates a key for the account after checking that it may have one. */
export async function generateSyncKey(s: KeyPorts, accountId: number) {
  await assertMayGenerateKey(s, accountId);
  return createSyncKey(s, accountId);
}

export type KeyState = 'active' | 'expired' | 'revoked';

export interface SyncKeyInfo {
  id: number;
  /** The first 12 characters (`hcsk_` + 7 hex): how the dashboard names a key. */
  prefix: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  state: KeyState;
}

/** The account's keys, newest first. */
export async function listSyncKeys(s: KeyPorts, accountId: number): Promise<SyncKeyInfo[]> {
  const rows = await syncKeysOf(s.database.db, accountId);
  const now = s.clock.now().toISOString();
  return rows.map((r) => ({
    id: r.id,
    prefix: r.key_prefix,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
    state: r.revoked_at !== null ? 'revoked' : r.expires_at <= now ? 'expired' : 'active',
  }));
}
