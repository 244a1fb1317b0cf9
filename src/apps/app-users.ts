// App users: people who sign up on a multi-tenant app. Use cases only — no HTTP here.
//
// - Signing up creates an `app_user` account (`signup_app_id` = the app; the username is chosen or
//   generated, validated like any username since it names a host), then its instance, then mails a
//   confirmation link. Saving the instance needs the confirmed email (access table: confirmed_owner).
// - Confirming marks `people.email_confirmed = 1`; the token is single use and expires (7 days).
// - Password reset: a request mails a single-use link (1 hour) when a person has that email and says
//   nothing either way; setting the new password also confirms the email (the link proved the
//   mailbox) and ends every other session of the account.
// - An app's host runs its owner's scripts, which could read what is typed there: sign-in, reset
//   requests and reset links there concern only app users of that host's apps. A developer's (or
//   another host's app user's) password is never checked, set or mailed for there, and the answer is
//   the one an unknown email gets.
import { appUserByEmail, confirmTokenPerson, updatePersonRow } from '../store/accounts.ts';
import { markEmailTokenUsed } from '../store/email-tokens.ts';
import type { Services } from '../services.ts';
import type { NodeRow } from '../store/schema.ts';
import { KilnError, badRequest } from '../errors.ts';
import { randomHex } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { emailProblem } from '../core/names.ts';
import { createPerson, personFacts, type CreatedPerson } from '../accounts/people.ts';
import { passwordProblem } from '../accounts/passwords.ts';
import { resetPassword } from '../accounts/account.ts';
import { getNode } from '../nodes/tree.ts';
import { createEmailToken, findEmailToken } from '../accounts/email-tokens.ts';

import { createInstance } from './instances.ts';
import { inTransaction } from '../store/transaction.ts';

/** Where links in mails point: the app's host (`http://alice.kiln.localhost:8080`) and the app's name. */
export interface AppLinks {
  hostUrl: string;
  appName: string;
  /** The app's path on its host, carried in links back to the app's pages. */
  appPath: string;
}

export interface SignUpInput {
  app: NodeRow;
  email: string;
  password: string;
  /** Chosen username; generated from the app's name when absent. */
  username?: string;
  links: AppLinks;
}

const GENERATED_USERNAME_TRIES = 5;

/** `todo.html` → `todo-3f9a1c07`: the app's name as a host label plus 8 random hex digits. */
function generatedUsername(appName: string): string {
  const slug = appName
    .replace(/\.(html|htmlclay)$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 20)
    .replace(/-+$/, '');
  return `${slug || 'user'}-${randomHex(4)}`;
}

/** Creates the app user, its instance, and mails the confirmation link. 400 for invalid input,
 *  409 when the email (or a chosen username) is taken. */
export async function signUpOnApp(
  s: Services,
  input: SignUpInput,
): Promise<{ person: CreatedPerson; instance: NodeRow }> {
  const base = {
    email: input.email,
    password: input.password,
    accountType: 'app_user' as const,
    plan: 'free' as const,
    emailConfirmed: false,
    signupAppId: input.app.id,
  };
  let person: CreatedPerson | undefined;
  if (input.username) {
    person = await createPerson(s, { ...base, username: input.username });
  } else {
    for (let i = 0; !person; i++) {
      try {
        person = await createPerson(s, { ...base, username: generatedUsername(input.app.name) });
      } catch (err) {
        // A generated name that happens to exist: draw another.
        if (!(err instanceof KilnError && err.code === 'username-taken') || i + 1 >= GENERATED_USERNAME_TRIES)
          throw err;
      }
    }
  }
  const instance = await createInstance(s, person.id, input.app.id);
  await sendConfirmation(s, { accountId: person.id, email: person.email }, input.links).catch((err) =>
    console.error('sending a confirmation mail failed:', err),
  );
  return { person, instance };
}

/** Mails a fresh confirmation link for the account's email. */
export async function sendConfirmation(
  s: Services,
  who: { accountId: number; email: string },
  links: AppLinks,
): Promise<void> {
  const token = await createEmailToken(s, { accountId: who.accountId, email: who.email, purpose: 'confirm' });
  await s.mailer.send({
    to: who.email,
    subject: `Confirm your email for ${links.appName}`,
    text: [
      `Confirm your email address to start saving your copy of ${links.appName}:`,
      '',
      `${links.hostUrl}/_/app/confirm/${token}`,
      '',
      'The link works for 7 days. If you did not sign up, ignore this message.',
    ].join('\n'),
  });
}

const INVALID_LINK = 'This link is invalid or has expired.';

/** Marks the email behind a confirmation token confirmed. Returns the account id; a link that was
 *  already used for this (now confirmed) email answers the same way. 400 `invalid-token` otherwise. */
export async function confirmEmail(s: Services, token: string): Promise<{ accountId: number }> {
  const { db } = s.database;
  const row = await findEmailToken(s, token, 'confirm');
  if (row && row.account_id !== null) {
    const accountId = row.account_id;
    const done = await inTransaction(s, async (trx) => {
      if (!(await markEmailTokenUsed(trx, row.id, s.clock.now().toISOString()))) return false;
      return updatePersonRow(trx, accountId, { email_confirmed: 1 }, { email: row.email });
    });
    if (done) return { accountId };
  }
  // Opened twice (a second click, a mail scanner that followed the link first): fine once confirmed.
  if (token && token.length <= 200) {
    const used = await confirmTokenPerson(db, sha256(token));
    if (used?.email_confirmed === 1) return { accountId: used.account_id };
  }
  throw badRequest(INVALID_LINK, 'invalid-token');
}

/** Mails a reset link when a person with a password uses this email; does nothing otherwise. Callers
 *  answer the same in both cases and should not wait for this (its time would tell the difference). */
export async function requestPasswordReset(s: Services, email: string, appId: number, links: AppLinks): Promise<void> {
  const address = email.trim().toLowerCase();
  // Only app users who signed up on THIS app: a developer or another app's user gets no link on an
  // app's host (whose owner's scripts run there and could read the token from the page).
  const person = await appUserByEmail(s.database.db, address, appId);
  if (!person || person.password_hash === null) return;
  const token = await createEmailToken(s, { accountId: person.account_id, email: person.email, purpose: 'reset' });
  await s.mailer.send({
    to: person.email,
    subject: `Reset your password for ${links.appName}`,
    text: [
      `Someone asked to reset the password of your account on ${links.appName}. Choose a new password here:`,
      '',
      `${links.hostUrl}/_/app/reset/${token}?app=${encodeURIComponent(links.appPath)}`,
      '',
      'The link works once, for one hour. If you did not ask for it, ignore this message: your password stays as it is.',
    ].join('\n'),
  });
}

/** 400 when the address cannot be an email (says nothing about whether an account uses it). */
export function assertEmailShape(email: string): void {
  const problem = emailProblem(email.trim().toLowerCase());
  if (problem) throw badRequest(problem, 'invalid');
}

/** True when the account is an app user who signed up on an app of `hostAccountId`. */
async function isAppUserOfHost(s: Services, accountId: number, hostAccountId: number): Promise<boolean> {
  const person = await personFacts(s, accountId);
  if (person?.accountType !== 'app_user' || person.signupAppId === null) return false;
  return (await getNode(s, person.signupAppId))?.owner_id === hostAccountId;
}

/** True when the reset token is usable (for showing the form). */
export async function resetTokenValid(s: Services, token: string): Promise<boolean> {
  return (await findEmailToken(s, token, 'reset')) !== undefined;
}

/** True when the reset token is usable on this app host (for showing the form): unused, unexpired,
 *  and an app user's of one of the host's apps. Anyone else's link answers like a bogus one. */
export async function appResetTokenValid(s: Services, token: string, hostAccountId: number): Promise<boolean> {
  const row = await findEmailToken(s, token, 'reset');
  return !!row && row.account_id !== null && isAppUserOfHost(s, row.account_id, hostAccountId);
}

/** Sets a new password through a reset link on an app host: only for an app user of the host's apps
 *  (same refusals, in the same order, as a bogus link); the reset itself is the accounts'. */
export async function resetAppUserPassword(
  s: Services,
  token: string,
  password: string,
  hostAccountId: number,
): Promise<{ accountId: number }> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest(problem, 'invalid');
  if (!(await appResetTokenValid(s, token, hostAccountId))) throw badRequest(INVALID_LINK, 'invalid-token');
  return resetPassword(s, token, password);
}
