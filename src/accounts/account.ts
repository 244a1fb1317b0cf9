// A developer's own account: password (change, and reset by a mailed link), where it is signed in
// (list, end one, end all), and deleting it. Every change that ends sessions returns their ids so the
// caller closes the streams they opened (src/events/revocations.ts).
import { publishHostChanged } from '../events/publish.ts';
import type { Services } from '../services.ts';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../errors.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import { createEmailToken, findEmailToken, useEmailToken } from './email-tokens.ts';
import { emailProblem, usernameProblem } from '../core/names.ts';
import { grants, revokeGrants } from '../events/revocations.ts';
import { LAST_EXPORT_DAYS, writeLastExport } from './export.ts';
import { DAY } from '../limits.ts';
import {
  updateAccountRow,
  usernameTaken,
  emailTaken,
  deleteAccountRow,
  holdUsername,
  reclaimUsername,
  personRow,
  soleOwnedTeams,
  superadminCount,
  updatePersonRow,
} from '../store/accounts.ts';
import { endSessions, liveLogins } from '../store/sessions.ts';
import { markEmailTokenUsed } from '../store/email-tokens.ts';
import { inTransaction } from '../store/transaction.ts';

/** How long a deleted account's username stays unavailable (links to its host must not reach a stranger). */
export const USERNAME_HOLD_DAYS = 90;
const RESET_LINK_GONE = 'This link is invalid or has expired.';

async function person(s: Services, accountId: number) {
  const p = await personRow(s.database.db, { id: accountId });
  if (!p) throw notFound('No such account.');
  return p;
}

/** The current password must be right; 401 `bad-credentials` otherwise. */
async function assertPassword(hash: string | null, password: string) {
  if (!(await verifyPassword(password, hash)))
    throw unauthorized('The current password is not right.', 'bad-credentials');
}

/** Changes the password (the current one required) and ends every other sign-in: other logins, their
 *  document-host sessions, and the host sessions of this login too (they re-fetch one on next visit). */
export async function changePassword(
  s: Services,
  accountId: number,
  keepLoginId: number | undefined,
  input: { current: string; next: string },
): Promise<number[]> {
  const p = await person(s, accountId);
  await assertPassword(p.password_hash, input.current);
  const next = input.next;
  const problem = passwordProblem(next);
  if (problem) throw badRequest(problem, 'invalid');
  await updatePersonRow(s.database.db, accountId, { password_hash: await hashPassword(next) });
  return endSessions(s.database.db, accountId, s.clock.now(), { keepLoginId });
}

export interface LoginInfo {
  id: number;
  createdAt: string;
  expiresAt: string;
  userAgent: string | null;
  /** Document hosts this login is signed in on. */
  hosts: string[];
  current: boolean;
}

/** Where the account is signed in: one entry per login, newest first. */
export async function signIns(s: Services, accountId: number, currentLoginId?: number): Promise<LoginInfo[]> {
  const rows = await liveLogins(s.database.db, accountId, s.clock.now());
  const logins = rows.filter((r) => r.host === null);
  return logins.map((l) => ({
    id: l.id,
    createdAt: l.created_at,
    expiresAt: l.expires_at,
    userAgent: l.user_agent,
    hosts: rows.filter((r) => r.login_id === l.id && r.host).map((r) => r.host!),
    current: l.id === currentLoginId,
  }));
}

/** Ends one login of the account (and its host sessions); 404 when it is not one of its live ones. */
export async function endSignIn(s: Services, accountId: number, loginId: number): Promise<number[]> {
  const ended = await endSessions(s.database.db, accountId, s.clock.now(), { onlyLoginId: loginId });
  if (ended.length === 0) throw notFound('No such sign-in (it may have ended already).');
  return ended;
}

/** Ends every sign-in of the account, this one included. */
export function signOutEverywhere(s: Services, accountId: number): Promise<number[]> {
  return endSessions(s.database.db, accountId, s.clock.now(), {});
}

/** Mails a reset link to a developer account with this email (and a password); does nothing
 *  otherwise. Callers answer the same either way, and should not wait (timing would tell). */
export async function requestDeveloperReset(
  s: Services,
  email: string,
  link: (token: string) => string,
): Promise<void> {
  const p = await personRow(s.database.db, { email });
  if (p?.account_type !== 'dev' || p.password_hash === null) return;
  const token = await createEmailToken(s, { accountId: p.id, email: p.email, purpose: 'reset' });
  await s.mailer.send({
    to: p.email,
    subject: 'Reset your Kiln password',
    text: [
      `Someone asked to reset the password of your Kiln account ${p.username}. Choose a new password here:`,
      '',
      link(token),
      '',
      'The link works once, for one hour. If you did not ask for it, ignore this message: your password stays as it is.',
    ].join('\n'),
  });
}

/** Deletes the account for good: documents, uploads, versions, keys, sessions, domains and team
 *  memberships go with it (foreign keys cascade); its username is held back for 90 days. Needs the
 *  username typed again and the password. Refused while it is the only owner of a team, or the only
 *  superadmin. Returns the ended session ids. */
export async function deleteAccount(
  s: Services,
  accountId: number,
  input: { confirm: string; password: string; exportFirst?: boolean },
): Promise<{ username: string; ended: number[]; exported: boolean }> {
  const p = await person(s, accountId);
  if (input.confirm.trim().toLowerCase() !== p.username)
    throw badRequest(`Type your username (${p.username}) to confirm.`, 'invalid');
  await assertPassword(p.password_hash, input.password);
  const { db } = s.database;
  const teams = await soleOwnedTeams(db, accountId);
  if (teams.length)
    throw conflict(
      `You are the only owner of ${teams.map((t) => t.username).join(', ')}: make someone else an owner first.`,
      'last-owner',
    );
  if (p.is_superadmin === 1 && (await superadminCount(db)) <= 1)
    throw forbidden('This is the only administrator of this Kiln; make another account an administrator first.');
  // Asked for: the whole tree, with versions, is written first and its link mailed; if that fails,
  // nothing is deleted.
  if (input.exportFirst) {
    const token = await writeLastExport(s, accountId);
    await s.mailer.send({
      to: p.email,
      subject: `Your Kiln export of ${p.username}`,
      text: `Everything of the account ${p.username}, as it was before you deleted it (documents, uploads, every version):\n\n${s.config.baseUrl}/_/export/${token}\n\nThe link works for ${LAST_EXPORT_DAYS} days.`,
    });
  }
  const ended = await endSessions(db, accountId, s.clock.now(), {});
  const until = new Date(s.clock.now().getTime() + USERNAME_HOLD_DAYS * DAY).toISOString();
  await inTransaction(s, async (trx) => {
    await holdUsername(trx, p.username, until);
    await deleteAccountRow(trx, accountId);
  });
  await publishHostChanged(s, accountId);
  return { username: p.username, ended, exported: !!input.exportFirst };
}

/** Sets a new password through a reset token (single use), confirms the email and ends every other
 *  session of the account. Returns the account id and its username. 400 for a refused password or an invalid link. */
export async function resetPassword(
  s: Services,
  token: string,
  password: string,
): Promise<{ accountId: number; username: string | null }> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest(problem, 'invalid');
  const row = await findEmailToken(s, token, 'reset');
  if (!row || row.account_id === null) throw badRequest(RESET_LINK_GONE, 'invalid-token');
  const accountId = row.account_id;
  const hash = await hashPassword(password);
  const now = s.clock.now().toISOString();
  const ended = await inTransaction(s, async (trx) => {
    if (!(await markEmailTokenUsed(trx, row.id, now))) return null;
    if (!(await updatePersonRow(trx, accountId, { password_hash: hash, email_confirmed: 1 }, { email: row.email })))
      return null;
    return endSessions(trx, accountId, s.clock.now(), {});
  });
  if (!ended) throw badRequest(RESET_LINK_GONE, 'invalid-token');
  // Streams opened with the ended sessions end too.
  await revokeGrants(
    s,
    ended.map((id) => grants.session(id)),
  );
  return { accountId, username: (await personRow(s.database.db, { id: accountId }))?.username ?? null };
}

/** Asks to change the email (the password required): a link goes to the new address, which must
 *  confirm it; the old address is told. Nothing changes until the link is used. */
export async function requestEmailChange(
  s: Services,
  accountId: number,
  input: { email: string; password: string },
  link: (token: string) => string,
): Promise<string> {
  const p = await person(s, accountId);
  await assertPassword(p.password_hash, input.password);
  const email = input.email.trim().toLowerCase();
  const problem = emailProblem(email);
  if (problem) throw badRequest(problem, 'invalid');
  if (email === p.email) {
    if (p.email_confirmed === 1) throw badRequest('That is your email already.', 'invalid');
    // The address the account has, not confirmed yet (a sign-up): a link to confirm it.
    const token = await createEmailToken(s, { accountId, email, purpose: 'email-change' });
    await s.mailer.send({
      to: email,
      subject: 'Confirm your email address for Kiln',
      text: `Confirm that ${email} is the address of the Kiln account ${p.username}:\n\n${link(token)}\n\nThe link works once, for a day.`,
    });
    return email;
  }
  if (await emailTaken(s.database.db, email))
    throw conflict('An account with that email already exists.', 'email-taken');
  const token = await createEmailToken(s, { accountId, email, purpose: 'email-change' });
  await s.mailer.send({
    to: email,
    subject: 'Confirm your new email address for Kiln',
    text: `Confirm that ${email} is the new address of the Kiln account ${p.username}:\n\n${link(token)}\n\nThe link works once, for a day.`,
  });
  await s.mailer.send({
    to: p.email,
    subject: 'Your Kiln email address is about to change',
    text: `Someone signed in as ${p.username} asked to change its email address to ${email}. It changes when that address confirms.\nIf this was not you, change your password now.`,
  });
  return email;
}

/** The address an email-change link would set, or 400 `invalid-token`. */
export async function emailChangeOf(s: Services, token: string): Promise<{ accountId: number; email: string }> {
  const row = await findEmailToken(s, token, 'email-change');
  if (!row || row.account_id === null) throw badRequest(RESET_LINK_GONE, 'invalid-token');
  return { accountId: row.account_id, email: row.email };
}

/** Uses an email-change link: the account's email becomes the new one (confirmed); the old one is told. */
export async function confirmEmailChange(s: Services, token: string): Promise<{ username: string; email: string }> {
  const change = await emailChangeOf(s, token);
  const p = await person(s, change.accountId);
  const row = await findEmailToken(s, token, 'email-change');
  if (!row || !(await useEmailToken(s, row.id))) throw badRequest(RESET_LINK_GONE, 'invalid-token');
  if (change.email === p.email) {
    // Confirming the address it has.
    await updatePersonRow(s.database.db, change.accountId, { email_confirmed: 1 }, { email: change.email });
    return { username: p.username, email: change.email };
  }
  if (await emailTaken(s.database.db, change.email))
    throw conflict('An account with that email already exists.', 'email-taken');
  await updatePersonRow(s.database.db, change.accountId, { email: change.email, email_confirmed: 1 });
  await s.mailer.send({
    to: p.email,
    subject: 'Your Kiln email address changed',
    text: `The email address of the Kiln account ${p.username} is now ${change.email}. If this was not you, contact the administrator of this Kiln.`,
  });
  return { username: p.username, email: change.email };
}

/** How long a changed username's old host leads to the new one (and the old name stays unavailable). */
export const USERNAME_MOVE_DAYS = 30;

/** Changes the username (the password required): the account's host moves to the new name; the old
 *  host redirects there for 30 days, and nobody else can take the old name meanwhile. The account may
 *  take a name it left back during that time: its host then serves there again. */
export async function changeUsername(
  s: Services,
  accountId: number,
  input: { username: string; password: string },
): Promise<{ from: string; to: string }> {
  const p = await person(s, accountId);
  await assertPassword(p.password_hash, input.password);
  const to = input.username.trim().toLowerCase();
  const problem = usernameProblem(to);
  if (problem) throw badRequest(problem, 'invalid');
  if (to === p.username) throw badRequest('That is your username already.', 'invalid');
  const { db } = s.database;
  // A name this account left is held for it: it may take it back (nobody else may).
  if (await usernameTaken(db, to, accountId)) throw conflict('That username is taken.', 'username-taken');
  const until = new Date(s.clock.now().getTime() + USERNAME_MOVE_DAYS * DAY).toISOString();
  await inTransaction(s, async (trx) => {
    await updateAccountRow(trx, accountId, { username: to });
    await holdUsername(trx, p.username, until, { to, accountId });
    await reclaimUsername(trx, accountId, to);
  });
  await publishHostChanged(s, accountId);
  return { from: p.username, to };
}
