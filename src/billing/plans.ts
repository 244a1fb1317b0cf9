// Plan tiers: what an account may have, and the refusals that say which limit was hit and how to raise it.
// The numbers live in src/limits.ts (`planLimits`); the rules live here:
//
// - Effective plan: a paid tier counts only while its subscription is active. An account whose
//   subscription ended keeps its `plan` column (the tier it bought, so a renewal restores it) but is
//   treated as free everywhere limits apply. Superadmins have no limits.
// - Sites per account: free 10; paid tiers are configured at 2000 and reported as unlimited.
// - Upload size per file: free 10 MB, Personal 20 MB, Maker 100 MB.
// - Subdomain, custom-domain and multi-tenant-app allowances grow with months active:
//       allowance = min(cap, base + perMonth × monthsActive)
//   where monthsActive is the number of whole calendar months since the current subscription started
//   (`accounts.plan_started_at`; 0 on the free plan). A month counts on the same day of a later month
//   (31 Jan → 28/29 Feb → 31 Mar …).
//
// Refusals: 402 `payment-required` when the effective plan allows none at all (upgrading is the way),
// 403 `quota-exceeded` when the allowance is used up (with the limit, the maximum, and how it grows).
// Both carry {limit, max, plan} in the JSON answer.
import { planRow } from '../store/accounts.ts';
import { countSites } from '../store/nodes.ts';
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import type { PlanSettings } from './plan-settings.ts';
import type { Executor, Plan, Tx } from '../store/schema.ts';
import { countedDomains } from '../store/billing.ts';
import { KilnError, notFound } from '../errors.ts';
import { planLimits, type Growth } from '../limits.ts';

/** What the plan rules use of the services, part by part (the AI edit handler reads plans here, so this does not import
 *  src/services.ts). */
export interface PlanPorts {
  database: Database;
  clock: Clock;
  planSettings: PlanSettings;
}

export const PLAN_NAMES: Record<Plan, string> = { free: 'Free', personal: 'Personal', maker: 'Maker' };
export const PAID_PLANS = ['personal', 'maker'] as const satisfies readonly Plan[];

/** The allowances that grow with months active. */
export type AllowanceKind = 'subdomains' | 'customDomains' | 'apps';

const ALLOWANCE_WORDS: Record<AllowanceKind, { one: string; many: string; remove: string }> = {
  subdomains: { one: 'subdomain', many: 'subdomains', remove: 'remove a subdomain' },
  customDomains: { one: 'custom domain', many: 'custom domains', remove: 'remove a domain' },
  apps: { one: 'multi-tenant app', many: 'multi-tenant apps', remove: 'turn sign-ups off on another app' },
};

/** What the plan rules need to know about an account. */
export interface PlanAccount {
  plan: Plan;
  hasActiveSubscription: boolean;
  /** Start of the current subscription (ISO), or null. */
  planStartedAt: string | null;
  isSuperadmin: boolean;
}

/** The tier whose limits apply: the bought tier while its subscription is active, else free. */
export function effectivePlan(a: { plan: Plan; hasActiveSubscription: boolean }): Plan {
  return a.plan !== 'free' && a.hasActiveSubscription ? a.plan : 'free';
}

/** `d` plus `n` calendar months (UTC), the day clamped to the target month's length. */
export function addMonths(d: Date, n: number): Date {
  const t = new Date(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + n,
      1,
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ),
  );
  const lastDay = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).getUTCDate();
  t.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return t;
}

/** Whole calendar months of the current paid subscription at `now` (0 on the free plan). */
export function monthsActive(a: PlanAccount, now: Date): number {
  if (effectivePlan(a) === 'free' || !a.planStartedAt) return 0;
  const start = new Date(a.planStartedAt);
  if (Number.isNaN(start.getTime()) || start > now) return 0;
  let n = (now.getUTCFullYear() - start.getUTCFullYear()) * 12 + (now.getUTCMonth() - start.getUTCMonth());
  while (n > 0 && addMonths(start, n) > now) n--;
  return Math.max(0, n);
}

export interface AllowanceInfo {
  /** How many the account may have now (Infinity for superadmins). */
  max: number;
  /** The most this tier ever allows. */
  cap: number;
  perMonth: number;
  monthsActive: number;
  /** When the allowance next grows by `perMonth`, or null when it is at its cap (or never grows). */
  growsAt: string | null;
}

export function allowance(a: PlanAccount, kind: AllowanceKind, now: Date): AllowanceInfo {
  const plan = effectivePlan(a);
  const g: Growth = planLimits[plan][kind];
  const months = monthsActive(a, now);
  if (a.isSuperadmin) return { max: Infinity, cap: Infinity, perMonth: 0, monthsActive: months, growsAt: null };
  const max = Math.min(g.cap, g.base + g.perMonth * months);
  const growsAt =
    max < g.cap && g.perMonth > 0 && a.planStartedAt
      ? addMonths(new Date(a.planStartedAt), months + 1).toISOString()
      : null;
  return { max, cap: g.cap, perMonth: g.perMonth, monthsActive: months, growsAt };
}

export interface SiteLimit {
  /** The configured ceiling, or null when there is none (superadmins). */
  max: number | null;
  /** True when the plan is reported as unlimited (paid tiers, superadmins). */
  unlimited: boolean;
}

export function siteLimit(a: { plan: Plan; hasActiveSubscription: boolean; isSuperadmin: boolean }): SiteLimit {
  if (a.isSuperadmin) return { max: null, unlimited: true };
  const plan = effectivePlan(a);
  return { max: planLimits[plan].sites, unlimited: plan !== 'free' };
}

/** Bytes one uploaded file may have on this tier (pass the effective plan): the administrator's
 *  setting, else src/limits.ts. */
export function uploadLimit(s: PlanPorts, plan: Plan): number {
  return s.planSettings.uploadBytes[plan];
}

const mb = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

/** 413 `too-large` when a file is larger than the plan allows, naming the limit and the tiers that allow more. */
export function assertUploadSize(s: PlanPorts, plan: Plan, size: number): void {
  const max = uploadLimit(s, plan);
  if (size <= max) return;
  const bigger = (Object.keys(planLimits) as Plan[]).filter((p) => uploadLimit(s, p) > max);
  const how = bigger.length
    ? `Upgrade to ${bigger.map((p) => `${PLAN_NAMES[p]} (${mb(uploadLimit(s, p))})`).join(' or ')} to upload larger files.`
    : 'This is the largest size any plan allows.';
  throw new KilnError(
    413,
    `Files are limited to ${mb(max)} on the ${PLAN_NAMES[plan].toLowerCase()} plan and this one is ${mb(size)}. ${how}`,
    'too-large',
    {
      limit: 'uploadSize',
      max,
      plan,
    },
  );
}

type Reader = Executor;

/** Reads the plan fields of an account (person or team). `lock` (with a transaction): a write lock on
 *  the account row (src/store/db.ts `lock`), so that checks made in one transaction (count, then insert)
 *  cannot both pass for one account. */
export async function loadPlanAccount(s: PlanPorts, db: Reader, accountId: number, lock = false): Promise<PlanAccount> {
  if (lock && db.isTransaction) await s.database.lock.row(db as Tx, 'accounts', accountId);
  const row = await planRow(db, accountId);
  if (!row) throw notFound('No such account.');
  return {
    plan: row.plan,
    hasActiveSubscription: row.has_active_subscription === 1,
    planStartedAt: row.plan_started_at,
    isSuperadmin: row.is_superadmin === 1,
  };
}

/** 403 `quota-exceeded` when the owner has as many sites as its plan allows (superadmins: no limit).
 *  Call inside the transaction that creates the site (outside one it only reads: a check ahead of time). */
export async function assertSiteQuota(s: PlanPorts, trx: Reader, ownerId: number, adding = 1): Promise<void> {
  const a = await loadPlanAccount(s, trx, ownerId, true);
  const limit = siteLimit(a);
  if (limit.max === null) return;
  const count = await countSites(trx, ownerId);
  if (count + adding <= limit.max) return;
  const plan = effectivePlan(a);
  const lapsed =
    a.plan !== 'free' && plan === 'free'
      ? ` Your ${PLAN_NAMES[a.plan]} subscription has ended; renewing it lifts the limit.`
      : '';
  const msg = limit.unlimited
    ? `This account has reached the ceiling of ${limit.max} documents. Delete documents you no longer need, or ask the administrator of this Kiln to raise it.`
    : `The free plan allows ${limit.max} documents and this account has ${count}. Upgrade to Personal or Maker for unlimited documents, or delete one first.${lapsed}`;
  throw new KilnError(403, msg, 'quota-exceeded', { limit: 'sites', max: limit.max, plan });
}

/** Refuses when `used` already fills the account's allowance of `kind`: 402 when the plan allows none,
 *  403 `quota-exceeded` otherwise; the message says how the allowance grows and which tier allows more. */
export function assertAllowance(a: PlanAccount, kind: AllowanceKind, used: number, now: Date): void {
  const info = allowance(a, kind, now);
  if (used < info.max) return;
  const plan = effectivePlan(a);
  const w = ALLOWANCE_WORDS[kind];
  const count = (n: number) => `${n} ${n === 1 ? w.one : w.many}`;
  const tierOffer = (p: Plan) => {
    const g = planLimits[p][kind];
    return g.perMonth > 0 && g.cap > g.base
      ? `${PLAN_NAMES[p]} (${g.base}, growing by ${g.perMonth} each month up to ${g.cap})`
      : `${PLAN_NAMES[p]} (${g.cap})`;
  };
  const better = PAID_PLANS.filter((p) => planLimits[p][kind].cap > info.cap);
  const upgrade = better.length ? `upgrade to ${better.map(tierOffer).join(' or ')}` : '';
  const extra = { limit: kind, max: info.max, plan, monthsActive: info.monthsActive, growsAt: info.growsAt };
  if (info.max === 0) {
    const lapsed =
      a.plan !== 'free' && plan === 'free' ? `Your ${PLAN_NAMES[a.plan]} subscription has ended; renew it, or ` : '';
    const msg = `The ${PLAN_NAMES[plan]} plan includes no ${w.many}. ${lapsed ? lapsed + upgrade : upgrade.charAt(0).toUpperCase() + upgrade.slice(1)} to add one.`;
    throw new KilnError(402, msg, 'payment-required', extra);
  }
  const parts = [
    `The ${PLAN_NAMES[plan]} plan allows ${count(info.max)}${info.perMonth > 0 && plan !== 'free' ? ` after ${info.monthsActive} month${info.monthsActive === 1 ? '' : 's'} active` : ''} and this account has ${used}.`,
  ];
  const ways: string[] = [];
  if (info.growsAt)
    ways.push(`the allowance grows by ${info.perMonth} on ${info.growsAt.slice(0, 10)} (up to ${info.cap})`);
  if (upgrade) ways.push(upgrade);
  ways.push(`${w.remove} first`);
  parts.push(`To raise it: ${ways.join(', or ')}.`);
  throw new KilnError(403, parts.join(' '), 'quota-exceeded', extra);
}

/** Before adding a custom domain for the account (domains not `failed` count). Pass the transaction
 *  that inserts the domain to make the check and the insert one step on PostgreSQL. */
export async function assertCanAddCustomDomain(s: PlanPorts, accountId: number, trx?: Tx): Promise<void> {
  const db = trx ?? s.database.db;
  const a = await loadPlanAccount(s, db, accountId, !!trx);
  if (a.isSuperadmin) return;
  assertAllowance(a, 'customDomains', await countedDomains(db, accountId), s.clock.now());
}

/** Before turning a document into a multi-tenant app (`enableSignups`); `nodeId` (the document being
 *  enabled) is not counted, so enabling an app twice is not refused. */
export async function assertCanEnableApp(s: PlanPorts, accountId: number, nodeId?: number, trx?: Tx): Promise<void> {
  const db = trx ?? s.database.db;
  const a = await loadPlanAccount(s, db, accountId, !!trx);
  if (a.isSuperadmin) return;
  const apps = await countSites(db, accountId, { apps: true, exceptId: nodeId });
  assertAllowance(a, 'apps', apps, s.clock.now());
}

export interface PlanSummary {
  plan: Plan;
  /** The tier whose limits apply now. */
  effectivePlan: Plan;
  hasActiveSubscription: boolean;
  planStartedAt: string | null;
  monthsActive: number;
  sites: { used: number; max: number | null; unlimited: boolean };
  uploadSize: number;
  allowances: Record<
    AllowanceKind,
    { used: number | null; max: number | null; cap: number | null; growsAt: string | null }
  >;
}

/** What the account has and may have, for the billing page and programs. */
export async function planSummary(s: PlanPorts, accountId: number): Promise<PlanSummary> {
  const { db } = s.database;
  const a = await loadPlanAccount(s, db, accountId);
  const now = s.clock.now();
  const [sites, domains, apps] = await Promise.all([
    countSites(db, accountId),
    countedDomains(db, accountId),
    countSites(db, accountId, { apps: true }),
  ]);
  const used: Record<AllowanceKind, number | null> = { subdomains: 1, customDomains: domains, apps };
  const finite = (n: number) => (Number.isFinite(n) ? n : null);
  const allowances = Object.fromEntries(
    (['subdomains', 'customDomains', 'apps'] as const).map((k) => {
      const info = allowance(a, k, now);
      return [k, { used: used[k], max: finite(info.max), cap: finite(info.cap), growsAt: info.growsAt }];
    }),
  ) as PlanSummary['allowances'];
  const limit = siteLimit(a);
  const plan = effectivePlan(a);
  return {
    plan: a.plan,
    effectivePlan: plan,
    hasActiveSubscription: a.hasActiveSubscription,
    planStartedAt: a.planStartedAt,
    monthsActive: monthsActive(a, now),
    sites: { used: sites, max: limit.unlimited ? null : limit.max, unlimited: limit.unlimited },
    uploadSize: uploadLimit(s, plan),
    allowances,
  };
}
