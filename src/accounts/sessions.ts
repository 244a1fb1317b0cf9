// Sessions: random tokens kept server-side as a SHA-256 hash, 30 days, revocable, each valid on ONE host.
//
// - A login is a session of the main app (`host` null). Signing in creates one.
// - A host session (`host` = a document host: `<username>.<root>` or a custom domain) belongs to a
//   login (`login_id`) and is valid on that host only. It is minted from a grant: a single-use token,
//   good for 60 seconds on one host, that the main app hands to the document host in a redirect
//   (src/http/routes/session.ts). It expires with its login.
// - Signing out (on any host) revokes the login and every host session of it.
//
// Every account's host runs its owner's scripts, so a session usable on a host it was not minted for
// would let one account's page act as its visitor: a session is only looked up for the host it names.
import type { Db } from '../store/schema.ts';
import type { PersonRow } from '../store/accounts.ts';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { limits } from '../limits.ts';
import {
  insertGrantRow,
  insertSessionRow,
  liveLogin,
  liveSessionExists,
  liveSessionOnHost,
  revokeLoginRows,
  sessionByTokenHash,
  useGrant,
} from '../store/sessions.ts';

export interface Session {
  id: number;
  accountId: number;
  /** The login this session belongs to (its own id for a login). */
  loginId: number;
}

export interface NewSession {
  id: number;
  token: string;
  expiresAt: Date;
}

/** A new login (a main-app session) for the account. */
export async function createLogin(db: Db, accountId: number, now: Date, userAgent?: string): Promise<NewSession> {
  const expiresAt = new Date(now.getTime() + limits.loginTokenLifetimeMs);
  return insertSession(db, { accountId, host: null, loginId: null, now, expiresAt, userAgent });
}

/** A session on one document host, belonging to a login, expiring with it. */
export async function createHostSession(
  db: Db,
  login: { id: number; accountId: number; expiresAt: Date },
  host: string,
  now: Date,
): Promise<NewSession> {
  return insertSession(db, { accountId: login.accountId, host, loginId: login.id, now, expiresAt: login.expiresAt });
}

async function insertSession(
  db: Db,
  v: {
    accountId: number;
    host: string | null;
    loginId: number | null;
    now: Date;
    expiresAt: Date;
    userAgent?: string;
  },
): Promise<NewSession> {
  const token = randomToken(32);
  const id = await insertSessionRow(db, {
    token_hash: sha256(token),
    account_id: v.accountId,
    created_at: v.now.toISOString(),
    expires_at: v.expiresAt.toISOString(),
    revoked_at: null,
    host: v.host,
    login_id: v.loginId,
    user_agent: v.userAgent ? v.userAgent.slice(0, 200) : null,
  });
  return { id, token, expiresAt: v.expiresAt };
}

/** The live session behind `token` on `host` (null: the main app) with its person's row, or null. A token
 *  minted for another host, revoked or expired is no session at all. */
export async function sessionFor(
  db: Db,
  token: string,
  host: string | null,
  now: Date,
): Promise<(Session & { expiresAt: string; person: PersonRow }) | null> {
  const row = await liveSessionOnHost(db, sha256(token), host, now);
  if (!row) return null;
  const { session_id, login_id, expires_at, ...person } = row;
  return { id: session_id, accountId: person.id, loginId: login_id ?? session_id, expiresAt: expires_at, person };
}

/** A grant that carries the login to `host`: single use, good for `limits.sessionGrantMs`. */
export async function createGrant(db: Db, loginId: number, host: string, now: Date): Promise<string> {
  const token = randomToken(32);
  await insertGrantRow(db, {
    token_hash: sha256(token),
    login_id: loginId,
    host,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + limits.sessionGrantMs).toISOString(),
    used_at: null,
  });
  return token;
}

/** Redeems a grant on `host`: a new host session of its login, or null when the grant is unknown,
 *  used, expired, made for another host, or its login has ended. Used once even under races: the
 *  UPDATE that marks it used is the check. */
export async function redeemGrant(
  db: Db,
  token: string,
  host: string,
  now: Date,
): Promise<(NewSession & { accountId: number }) | null> {
  const loginId = await useGrant(db, sha256(token), host, now);
  if (loginId === undefined) return null;
  const login = await liveLogin(db, loginId, now);
  if (!login) return null;
  const session = await createHostSession(
    db,
    { id: login.id, accountId: login.account_id, expiresAt: new Date(login.expires_at) },
    host,
    now,
  );
  return { ...session, accountId: login.account_id };
}

/** Ends the login behind a session token (of any host) and every host session of it. Returns the ids
 *  of the sessions that ended, so their open streams can be closed. */
export async function revokeLogin(db: Db, token: string, now: Date): Promise<number[]> {
  const row = await sessionByTokenHash(db, sha256(token));
  if (!row) return [];
  return revokeLoginRows(db, row.login_id ?? row.id, now);
}

/** True while the session with this id is neither revoked nor expired (streams re-check it once
 *  they have subscribed). */
export async function sessionLive(db: Db, id: number, now: Date): Promise<boolean> {
  return liveSessionExists(db, id, now);
}
