// Every limit of the service, named as the spec names it. Nothing else hard-codes these numbers.
import type { Plan } from './store/schema.ts';

const MB = 1024 * 1024;
export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

export const limits = {
  /** PUT /_/sync/nodes/<id>/content and every document save. */
  documentSize: 5 * MB,
  body: {
    json: 5 * MB,
    jsonSyncAndUpload: 150 * MB,
    jsonCollection: 1 * MB,
    jsonLiveSync: 10 * MB,
    text: 5 * MB,
    form: 2 * MB,
  },
  uploadSize: { free: 10 * MB, personal: 20 * MB, maker: 100 * MB } satisfies Record<Plan, number>,
  /** Sites per account. Paid plans are configured at 2000 and reported as unlimited. */
  sites: { free: 10, personal: 2000, maker: 2000 } satisfies Record<Plan, number>,
  folderDepth: 5,
  nameLength: 255,
  pathLength: 1024,
  syncKeyLifetimeMs: 365 * DAY,
  loginTokenLifetimeMs: 30 * DAY,
  loginAttempts: { max: 20, windowMs: 15 * MINUTE },
  generalLimiter: { max: 100, windowMs: 15 * MINUTE },
  strictLimiter: { max: 5, windowMs: 60 * MINUTE },
  domainCalls: { max: 10, windowMs: MINUTE },
  dataCacheMs: 5 * MINUTE,
  liveKeepAliveMs: 30_000,
  password: { minLength: 8, maxLength: 1024, commonListSize: 100_000 },
  usernameLength: { min: 2, max: 40 },
  emailLength: 254,
  shareCookieMaxAgeMs: 365 * DAY,
} as const;

export function isUnlimitedSites(plan: Plan): boolean {
  return plan !== 'free';
}
