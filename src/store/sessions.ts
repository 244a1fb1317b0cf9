// The sessions store: session and grant rows, the sign-ins of an account and ending them. (The session
// life cycle itself: src/accounts/sessions.ts.)
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { DB, Db, NewRow } from './schema.ts';
import { PERSON_COLUMNS } from './accounts.ts';

/** Inserts a session row; returns its id. */
export async function insertSessionRow(db: Db, row: NewRow<'sessions'>): Promise<number> {
  return (await db.insertInto('sessions').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** The live session with this token hash minted for `host` (null: the main app) and its person's row, in one
 *  statement (every signed-in request reads both; on PostgreSQL each statement is a round trip), or undefined.
 *  It runs on every signed-in request: compiled once per database (and kind of host) and reused, as Kysely would
 *  build and compile it again each time (more CPU than SQLite takes to run it). */
export async function liveSessionOnHost(db: Db, tokenHash: string, host: string | null, now: Date) {
  const forHost = host !== null;
  let compiled = (forHost ? onHostLookups : mainLookups).get(db);
  if (!compiled) {
    compiled = liveSessionQuery(db, forHost).compile();
    (forHost ? onHostLookups : mainLookups).set(db, compiled);
  }
  // The values in the order the query names them (see liveSessionQuery).
  const parameters = [tokenHash, ...(forHost ? [host] : [])];
  const row = (await db.executeQuery<SessionRow>({ ...compiled, parameters })).rows[0] as SessionRow | undefined;
  if (!row || row.expires_at <= now.toISOString()) return undefined;
  return row;
}

/** The session first (the token names one at most), then its person. SQLite prepares a statement afresh every
 *  time new values are bound to it when they take part in a join's plan (a time in a range comparison, a key
 *  that the join carries to another table's rowid): so the session is read in a materialized CTE, its expiry
 *  compared after the read, and the join that follows has no bound value. */
function liveSessionQuery(db: Db, forHost: boolean) {
  return db
    .with(
      (cte) => cte('live').materialized(),
      (q) => {
        const live = q
          .selectFrom('sessions')
          .select(['id', 'account_id', 'login_id', 'expires_at'])
          .where('token_hash', '=', '')
          .where('revoked_at', 'is', null);
        return forHost ? live.where('host', '=', '') : live.where('host', 'is', null);
      },
    )
    .selectFrom('live')
    .innerJoin('accounts', 'accounts.id', 'live.account_id')
    .innerJoin('people', 'people.account_id', 'accounts.id')
    .select([...PERSON_COLUMNS, 'live.id as session_id', 'live.login_id', 'live.expires_at'])
    .where('accounts.kind', '=', sql.lit('person'));
}

type SessionRow = Awaited<ReturnType<ReturnType<typeof liveSessionQuery>['executeTakeFirstOrThrow']>>;
type SessionLookup = CompiledQuery<SessionRow>;
const onHostLookups = new WeakMap<Db, SessionLookup>();
const mainLookups = new WeakMap<Db, SessionLookup>();

/** The session with this token hash (live or not), or undefined. */
export function sessionByTokenHash(db: Db, tokenHash: string) {
  return db.selectFrom('sessions').select(['id', 'login_id']).where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** A live login (a main-app session) by id, or undefined. */
export function liveLogin(db: Db, id: number, now: Date) {
  return db
    .selectFrom('sessions')
    .select(['id', 'account_id', 'expires_at'])
    .where('id', '=', id)
    .where('host', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
}

/** True while the session with this id is neither revoked nor expired. */
export async function liveSessionExists(db: Db, id: number, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return !!row;
}

/** Revokes a login and its host sessions (those still live); returns the ids revoked. */
export async function revokeLoginRows(db: Db, loginId: number, now: Date): Promise<number[]> {
  const ended = await db
    .updateTable('sessions')
    .set({ revoked_at: now.toISOString() })
    .where((eb) => eb.or([eb('id', '=', loginId), eb('login_id', '=', loginId)]))
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return ended.map((r) => r.id);
}

/** Inserts a session grant row. */
export async function insertGrantRow(db: Db, row: NewRow<'session_grants'>): Promise<void> {
  await db.insertInto('session_grants').values(row).execute();
}

/** Marks the unused, unexpired grant with this token hash for `host` used; returns its login's id, or
 *  undefined when there is no such grant (the UPDATE is the check, so a grant is used once). */
export async function useGrant(db: Db, tokenHash: string, host: string, now: Date): Promise<number | undefined> {
  const iso = now.toISOString();
  const grant = await db
    .updateTable('session_grants')
    .set({ used_at: iso })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', iso)
    .where('host', '=', host)
    .returning('login_id')
    .executeTakeFirst();
  return grant?.login_id;
}

/** Live sessions of an account (logins and their host sessions). */
export function liveLogins(db: Kysely<DB>, accountId: number, now: Date) {
  return db
    .selectFrom('sessions')
    .select(['id', 'host', 'login_id', 'created_at', 'expires_at', 'user_agent'])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Ends an account's live sessions: all of them; all but one login (`keepLoginId`: that login stays,
 *  its host sessions end); or one login with its host sessions (`onlyLoginId`). Returns the ids ended. */
export async function endSessions(
  db: Kysely<DB>,
  accountId: number,
  now: Date,
  o: { keepLoginId?: number; onlyLoginId?: number },
): Promise<number[]> {
  let q = db
    .updateTable('sessions')
    .set({ revoked_at: now.toISOString() })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null);
  if (o.keepLoginId !== undefined) q = q.where('id', '!=', o.keepLoginId);
  if (o.onlyLoginId !== undefined) {
    const id = o.onlyLoginId;
    q = q.where((eb) => eb.or([eb.and([eb('id', '=', id), eb('host', 'is', null)]), eb('login_id', '=', id)]));
  }
  return (await q.returning('id').execute()).map((r) => r.id);
}
