// What a superadmin does on /_/admin: find accounts, change a plan, suspend and unsuspend, and set how
// this Kiln takes new accounts (open, by invitation link only, or closed) and on which plan.
import { dayOf, usageOn } from '../ai-edit/budget.ts';
import { publishHostChanged } from '../events/publish.ts';
import type { Services } from '../services.ts';
import type { Plan, Tx } from '../store/schema.ts';
import { markEmailTokenUsed } from '../store/email-tokens.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { PLANS } from '../accounts/people.ts';
import { createEmailToken, findEmailToken } from '../accounts/email-tokens.ts';
import {
  accountById,
  adminAccountCount,
  adminAccounts,
  keyIdsOf,
  personFacts,
  personRow,
  updateAccountRow,
  usernameOf,
} from '../store/accounts.ts';
import { namesSharedByAccounts, nodeById, rescopeDocumentNames } from '../store/nodes.ts';
import { endSessions } from '../store/sessions.ts';
import { readSetting, writeSetting } from '../store/settings.ts';
import { grants, revokeGrants } from '../events/revocations.ts';
import { recordActivity } from '../store/activity.ts';
import { emailProblem } from '../core/names.ts';
import { inTransaction } from '../store/transaction.ts';

export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

export const DOCUMENT_NAME_MODES = ['instance', 'account'] as const;
export type DocumentNameMode = (typeof DOCUMENT_NAME_MODES)[number];

export interface InstanceSettings {
  signups: SignupMode;
  defaultPlan: Plan;
  /** Where a document name is unique: across this Kiln (as Hyperclay), or per account. */
  documentNames: DocumentNameMode;
}

export const PAGE_SIZE = 50;

export async function listAccounts(s: Services, q: string, page: number) {
  const p = Math.max(1, Math.min(page, 10_000));
  const [rows, total] = await Promise.all([
    adminAccounts(s.database.db, q.slice(0, 100), PAGE_SIZE, (p - 1) * PAGE_SIZE),
    adminAccountCount(s.database.db, q.slice(0, 100)),
  ]);
  // What each spent of its daily AI budget today (src/ai-edit/budget.ts).
  const ai = await usageOn(
    s.database.db,
    rows.map((r) => r.id),
    dayOf(s.clock.now()),
  );
  return {
    page: p,
    pages: Math.max(1, Math.ceil(total / PAGE_SIZE)),
    total,
    accounts: rows.map((r) => ({
      id: r.id,
      username: r.username,
      kind: r.kind,
      email: r.email,
      accountType: r.account_type,
      superadmin: r.is_superadmin === 1,
      emailConfirmed: r.email_confirmed === 1,
      plan: r.plan,
      paying: r.has_active_subscription === 1,
      documents: Number(r.documents ?? 0),
      storage: Number(r.storage ?? 0),
      lastActive: r.last_active ? String(r.last_active) : null,
      createdAt: r.created_at,
      suspended: r.suspended_at !== null,
      aiEditToday: ai.get(r.id) ?? { requests: 0, bytes: 0 },
    })),
  };
}

async function target(s: Services, adminId: number, accountId: number) {
  const a = await accountById(s.database.db, accountId);
  if (!a) throw notFound('No such account.');
  if (a.id === adminId) throw forbidden('Administrators do not change their own account here.');
  return a;
}

export async function setAccountPlan(s: Services, adminId: number, accountId: number, plan: unknown) {
  if (typeof plan !== 'string' || !PLANS.includes(plan as Plan))
    throw badRequest(`Plan must be one of ${PLANS.join(', ')}.`, 'invalid');
  const a = await target(s, adminId, accountId);
  // A plan given by an administrator counts as paid for (no subscription to lapse).
  await updateAccountRow(s.database.db, a.id, {
    plan: plan as Plan,
    has_active_subscription: plan === 'free' ? 0 : 1,
    plan_started_at: plan === 'free' ? null : (a.plan_started_at ?? s.clock.now().toISOString()),
  });
  return { username: a.username, plan: plan as Plan };
}

/** Suspends (or lifts a suspension of) an account: while suspended its hosts answer 451, it cannot
 *  sign in, and its sync keys stop; every open session and stream of it ends now. */
export async function setSuspended(s: Services, adminId: number, accountId: number, suspended: boolean) {
  const a = await target(s, adminId, accountId);
  const { db } = s.database;
  await updateAccountRow(db, a.id, { suspended_at: suspended ? s.clock.now().toISOString() : null });
  await publishHostChanged(s, a.id);
  if (suspended) {
    const ended = await endSessions(db, a.id, s.clock.now(), {});
    const keys = await keyIdsOf(db, a.id);
    await revokeGrants(s, [...ended.map(grants.session), ...keys.map(grants.key)]);
  }
  return { username: a.username, suspended };
}

export async function instanceSettings(s: Services): Promise<InstanceSettings> {
  const [signups, plan, names] = await Promise.all([
    readSetting(s.database.db, 'signups'),
    readSetting(s.database.db, 'default-plan'),
    readSetting(s.database.db, 'document-names'),
  ]);
  return {
    signups: SIGNUP_MODES.find((m) => m === signups) ?? 'open',
    defaultPlan: PLANS.find((p) => p === plan) ?? 'free',
    documentNames: DOCUMENT_NAME_MODES.find((m) => m === names) ?? 'instance',
  };
}

export async function saveInstanceSettings(
  s: Services,
  input: { signups: unknown; defaultPlan: unknown; documentNames?: unknown },
): Promise<InstanceSettings> {
  const signups = SIGNUP_MODES.find((m) => m === input.signups);
  if (!signups) throw badRequest(`Sign-ups must be one of ${SIGNUP_MODES.join(', ')}.`, 'invalid');
  const plan = PLANS.find((p) => p === input.defaultPlan);
  if (!plan) throw badRequest(`The default plan must be one of ${PLANS.join(', ')}.`, 'invalid');
  const names =
    input.documentNames === undefined
      ? (await instanceSettings(s)).documentNames
      : DOCUMENT_NAME_MODES.find((m) => m === input.documentNames);
  if (!names) throw badRequest(`Document names must be one of ${DOCUMENT_NAME_MODES.join(', ')}.`, 'invalid');
  // First, as it may be refused: then nothing is saved.
  await setDocumentNames(s, names);
  await writeSetting(s.database.db, 'signups', signups);
  await writeSetting(s.database.db, 'default-plan', plan);
  return { signups, defaultPlan: plan, documentNames: names };
}

/** Switches where document names are unique. Per account always works; back to unique across this Kiln
 *  only while no two accounts have a live document of the same name (409 `name-conflict` lists them).
 *  Writes to documents wait meanwhile, so no name is checked under one mode and stored under the other. */
export async function setDocumentNames(s: Services, mode: DocumentNameMode): Promise<void> {
  const { db } = s.database;
  if ((await readSetting(db, 'document-names')) === mode) return;
  await inTransaction(s, async (trx) => {
    await s.database.lock.table(trx, 'nodes');
    if (mode === 'instance') {
      const shared = await namesSharedByAccounts(trx, 10);
      if (shared.total > 0) {
        const owners = new Map<number, string>();
        for (const id of new Set(shared.names.flatMap((n) => n.owners))) owners.set(id, await usernameOf(trx, id));
        const list = shared.names.map((n) => `${n.name} (${n.owners.map((o) => owners.get(o)).join(', ')})`);
        throw conflict(
          `Document names stay per account: ${shared.total} name${shared.total === 1 ? ' is' : 's are'} used by more than one account: ${list.join('; ')}${shared.total > list.length ? '; …' : ''}. Rename those documents first.`,
          'name-conflict',
          { names: shared.names.map((n) => n.name) },
        );
      }
    }
    await rescopeDocumentNames(trx, mode);
    await writeSetting(trx, 'document-names', mode);
  });
}

/** A one-time link that lets one person sign up while sign-ups are by invitation (14 days). */
export function createSignupInvite(s: Services): Promise<string> {
  return createEmailToken(s, { accountId: null, email: '', purpose: 'invite' });
}

/** Whether a new account may be made now: 403 `signups-closed` when sign-ups are closed, or by
 *  invitation and `invite` is no valid one. Returns the invitation to use up (or null). */
/** How the sign-up page meets a visitor: open, by invitation (with a valid one: `invited`), or closed. */
export async function signupMode(
  s: Services,
  invite: string | undefined,
): Promise<'open' | 'invite' | 'invited' | 'closed'> {
  const { signups } = await instanceSettings(s);
  if (signups !== 'invite') return signups;
  return invite && (await findEmailToken(s, invite, 'invite')) ? 'invited' : 'invite';
}

const BY_INVITATION = 'This Kiln takes new accounts by invitation only: open the invitation link you were sent.';

export async function assertSignupOpen(s: Services, invite: string | undefined): Promise<{ id: number } | null> {
  const { signups } = await instanceSettings(s);
  if (signups === 'open') return null;
  if (signups === 'invite' && invite) {
    const row = await findEmailToken(s, invite, 'invite');
    if (row) return { id: row.id };
  }
  throw forbidden(
    signups === 'closed' ? 'This Kiln takes no new accounts at the moment.' : BY_INVITATION,
    'signups-closed',
  );
}

/** Uses up a sign-up's invitation inside the new account's transaction (src/accounts/people.ts `createPerson`):
 *  when another sign-up used it meanwhile, 403 and no account. */
export async function useSignupInvite(s: Services, trx: Tx, inviteId: number): Promise<void> {
  if (!(await markEmailTokenUsed(trx, inviteId, s.clock.now().toISOString())))
    throw forbidden(`${BY_INVITATION} This one was used already.`, 'signups-closed');
}

/** Support: the administrator signs in as the account (their own sign-in ends; signing out ends this
 *  one). The account's activity feed gets a line saying which administrator did, and when. */
export async function impersonate(s: Services, adminId: number, accountId: number) {
  const a = await target(s, adminId, accountId);
  if (a.kind !== 'person')
    throw badRequest('Only people can be signed in as; open a team through one of its owners.', 'invalid');
  await recordActivity(s.database.db, {
    ownerId: a.id,
    at: s.clock.now().toISOString(),
    kind: 'impersonated',
    nodeId: null,
    nodeType: null,
    path: '',
    writer: `admin:${adminId}`,
  });
  return { accountId: a.id, username: a.username };
}

/** A test message through the configured mail (SMTP, or the outbox folder without SMTP_URL). */
export async function sendTestMail(s: Services, to: unknown): Promise<string> {
  const address = String(to ?? '')
    .trim()
    .toLowerCase();
  const problem = emailProblem(address);
  if (problem) throw badRequest(problem, 'invalid');
  await s.mailer.send({
    to: address,
    subject: 'Kiln test mail',
    text: `This is a test message from the Kiln at ${s.config.baseUrl}. If it arrived, mail works.`,
  });
  return address;
}

/** An app user whose email is not confirmed yet, with the app it signed up on (for a new link). */
export async function unconfirmedAppUser(s: Services, accountId: number) {
  const p = await personRow(s.database.db, { id: accountId });
  if (p?.account_type !== 'app_user') throw badRequest('Only app users confirm their email.', 'invalid');
  if (p.email_confirmed === 1) throw badRequest(`${p.username} has confirmed their email already.`, 'invalid');
  const facts = await personFacts(s.database.db, accountId);
  const app = facts?.signupAppId ? await nodeById(s.database.db, facts.signupAppId) : undefined;
  if (!app) throw notFound('The app this person signed up on is gone.');
  return { person: p, app, appOwner: await usernameOf(s.database.db, app.owner_id) };
}

/** Sets each plan's upload size per file (whole megabytes, 1 to 150). */
export async function saveUploadLimits(s: Services, mb: Record<Plan, unknown>): Promise<Record<Plan, number>> {
  const bytes = {} as Record<Plan, number>;
  for (const plan of PLANS) {
    const v = Number(mb[plan]);
    if (!Number.isInteger(v) || v < 1 || v > 150)
      throw badRequest(`The ${plan} plan's upload size must be a whole number of MB from 1 to 150.`, 'invalid');
    bytes[plan] = v * 1024 * 1024;
  }
  await s.planSettings.save(bytes);
  return bytes;
}
