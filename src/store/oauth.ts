// The OAuth store: what the authorization server library keeps (oauth_objects, through src/oauth/adapter.ts)
// and Kiln's grants (oauth_grants: what the person chose on the consent page; src/oauth/grants.ts).
import type { Executor, NewRow } from './schema.ts';

// ------------------------------------------------------------------ the library's objects

export interface OAuthObject {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  consumed_at: number | null;
  expires_at: string | null;
}

/** Stores an object, replacing the one with its model and id. */
export async function upsertOAuthObject(db: Executor, row: OAuthObject): Promise<void> {
  await db
    .insertInto('oauth_objects')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['model', 'id']).doUpdateSet({
        payload: row.payload,
        grant_id: row.grant_id,
        uid: row.uid,
        consumed_at: row.consumed_at,
        expires_at: row.expires_at,
      }),
    )
    .execute();
}

export function oauthObject(db: Executor, model: string, id: string) {
  return db
    .selectFrom('oauth_objects')
    .select(['payload', 'consumed_at', 'expires_at'])
    .where('model', '=', model)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function oauthObjectByUid(db: Executor, model: string, uid: string) {
  return db
    .selectFrom('oauth_objects')
    .select(['id', 'payload', 'consumed_at', 'expires_at'])
    .where('model', '=', model)
    .where('uid', '=', uid)
    .executeTakeFirst();
}

export async function consumeOAuthObject(db: Executor, model: string, id: string, at: number): Promise<void> {
  await db
    .updateTable('oauth_objects')
    .set({ consumed_at: at })
    .where('model', '=', model)
    .where('id', '=', id)
    .execute();
}

export async function deleteOAuthObject(db: Executor, model: string, id: string): Promise<void> {
  await db.deleteFrom('oauth_objects').where('model', '=', model).where('id', '=', id).execute();
}

/** Deletes a grant's objects of one model (every model when none is named). */
export async function deleteOAuthObjectsOfGrant(db: Executor, grantId: string, model?: string): Promise<void> {
  let q = db.deleteFrom('oauth_objects').where('grant_id', '=', grantId);
  if (model) q = q.where('model', '=', model);
  await q.execute();
}

/** An access token (by the SHA-256 of its value) with the grant it belongs to: what a call with it needs. */
export function accessTokenWithGrant(db: Executor, tokenHash: string) {
  return db
    .selectFrom('oauth_objects')
    .innerJoin('oauth_grants', 'oauth_grants.grant_id', 'oauth_objects.grant_id')
    .select([
      'oauth_objects.payload',
      'oauth_objects.expires_at as token_expires_at',
      'oauth_grants.id',
      'oauth_grants.person_id',
      'oauth_grants.client_name',
      'oauth_grants.account_id',
      'oauth_grants.folder',
      'oauth_grants.read_only',
      'oauth_grants.expires_at',
      'oauth_grants.last_used_at',
      'oauth_grants.revoked_at',
    ])
    .where('oauth_objects.model', '=', 'AccessToken')
    .where('oauth_objects.id', '=', tokenHash)
    .executeTakeFirst();
}

// ------------------------------------------------------------------ Kiln's grants

export async function insertOAuthGrant(db: Executor, row: NewRow<'oauth_grants'>): Promise<number> {
  const r = await db.insertInto('oauth_grants').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export function oauthGrantByGrantId(db: Executor, grantId: string) {
  return db
    .selectFrom('oauth_grants')
    .select(['id', 'person_id', 'revoked_at'])
    .where('grant_id', '=', grantId)
    .executeTakeFirst();
}

/** A person's grants that still work (not revoked, not expired), newest first, with the account each reaches. */
export function liveOAuthGrantsOf(db: Executor, personId: number, now: string) {
  return db
    .selectFrom('oauth_grants')
    .innerJoin('accounts', 'accounts.id', 'oauth_grants.account_id')
    .select([
      'oauth_grants.id',
      'oauth_grants.client_name',
      'oauth_grants.client_id',
      'oauth_grants.redirect_uri',
      'oauth_grants.folder',
      'oauth_grants.read_only',
      'oauth_grants.created_at',
      'oauth_grants.last_used_at',
      'accounts.username as account_username',
      'accounts.kind as account_kind',
    ])
    .where('oauth_grants.person_id', '=', personId)
    .where('oauth_grants.revoked_at', 'is', null)
    .where('oauth_grants.expires_at', '>', now)
    .orderBy('oauth_grants.id', 'desc')
    .execute();
}

/** Marks a live grant revoked: one of the person's (`id` + `personId`), or the library's grant `grantId`.
 *  Returns its library grant id and client name, or undefined when there was no such live grant. */
export async function revokeOAuthGrantRow(
  db: Executor,
  where: { id: number; personId: number } | { grantId: string },
  at: string,
): Promise<{ grant_id: string; client_name: string } | undefined> {
  let q = db.updateTable('oauth_grants').set({ revoked_at: at }).where('revoked_at', 'is', null);
  q = 'grantId' in where ? q.where('grant_id', '=', where.grantId) : q.where('id', '=', where.id);
  if ('personId' in where) q = q.where('person_id', '=', where.personId);
  return q.returning(['grant_id', 'client_name']).executeTakeFirst();
}

export async function touchOAuthGrant(db: Executor, id: number, at: string): Promise<void> {
  await db.updateTable('oauth_grants').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Who an `oauth:<id>` writer is, for the activity feed: the person and the client's name. */
export function oauthWriterRow(db: Executor, id: number) {
  return db
    .selectFrom('oauth_grants')
    .innerJoin('accounts', 'accounts.id', 'oauth_grants.person_id')
    .select(['accounts.username', 'oauth_grants.client_name'])
    .where('oauth_grants.id', '=', id)
    .executeTakeFirst();
}

// ------------------------------------------------------------------ the sweep

/** Forgets expired objects, and grants that ended (revoked or expired) before `endedBefore`. */
export async function sweepOAuthRows(db: Executor, now: string, endedBefore: string): Promise<void> {
  await db.deleteFrom('oauth_objects').where('expires_at', '<=', now).execute();
  await db
    .deleteFrom('oauth_grants')
    .where((eb) => eb.or([eb('revoked_at', '<=', endedBefore), eb('expires_at', '<=', endedBefore)]))
    .execute();
}

/** The registered clients (with their payloads) that no grant keeps: none of their grants holds a token or was
 *  made or used after `since` (a client that never completed an authorization has no grant at all). */
export function idleOAuthClients(db: Executor, since: string) {
  return db
    .selectFrom('oauth_objects as c')
    .select(['c.id', 'c.payload'])
    .where('c.model', '=', 'Client')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('oauth_grants as g')
            .select('g.id')
            .whereRef('g.client_id', '=', 'c.id')
            .where((g) =>
              g.or([
                g('g.created_at', '>', since),
                g('g.last_used_at', '>', since),
                g.exists(
                  g
                    .selectFrom('oauth_objects as t')
                    .select('t.id')
                    .whereRef('t.grant_id', '=', 'g.grant_id')
                    .where('t.model', 'in', ['AccessToken', 'RefreshToken']),
                ),
              ]),
            ),
        ),
      ),
    )
    .execute();
}

/** Forgets registered clients. */
export async function deleteOAuthClients(db: Executor, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500)
    await db
      .deleteFrom('oauth_objects')
      .where('model', '=', 'Client')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
}
