// Who a sync request acts for. Every sync route (and the sync stream) starts here:
//
//   X-API-Key           → the key's owner (401 missing / not hcsk_ / unknown / expired / revoked)
//   base /_/sync        → the owner's own account; protocol-2 headers are accepted, and an
//                         X-Sync-Account-ID naming another account answers 409 `account-changed`
//   base /_/team/T/sync → team T: needs X-Sync-Protocol: 2 and X-Sync-Account-ID (428
//                         `account-identity-required`), the id must be T's (409 `account-changed`),
//                         the owner must be a member (404 `not-found`) and not a viewer (403 `viewer`)
//
// A key can do what its owner can to the owner's nodes and to those of every team where the owner is
// owner or editor. Listing, reading and deleting need nothing more; creating, editing, renaming and
// moving need the scope account's plan to include sync (402 `payment-required`): the person's own plan
// on /_/sync, the team's plan on a team base.
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan, TeamRole } from '../store/schema.ts';
import { KilnError, conflict } from '../errors.ts';
import { actorForSyncKey, PAYMENT_REQUIRED_MSG } from './keys.ts';
import { findTeam, planIncludesSync, roleIn } from '../teams/teams.ts';
import { authorizeTeamChange } from '../access/authorize.ts';

export interface SyncAccount {
  id: number;
  kind: 'personal' | 'team';
  username: string;
  plan: Plan;
  hasActiveSubscription: boolean;
}

export interface SyncScope {
  /** The key's owner. */
  actor: Actor;
  /** The account whose tree the request reads and writes. */
  account: SyncAccount;
  /** The owner's role in that account ('owner' for the personal account). */
  role: TeamRole;
  /** 2 when the request carries `X-Sync-Protocol: 2`. */
  protocol: 1 | 2;
  /** The account's plan includes syncing: creating, editing, renaming and moving are allowed. */
  canWrite: boolean;
  /** The sync base this scope is reached at (`/_/sync` or `/_/team/<username>/sync`). */
  syncBase: string;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
}

export function syncBaseOf(account: { kind: 'personal' | 'team'; username: string }): string {
  return account.kind === 'team' ? `/_/team/${account.username}/sync` : '/_/sync';
}

function accountChanged(): KilnError {
  return conflict(
    'X-Sync-Account-ID does not name the account of this sync base; discover the accounts again.',
    'account-changed',
  );
}

/** The scope of a sync request: `team` is the `<team>` of `/_/team/<team>/sync/...`, or undefined. */
export async function syncScope(s: Services, req: FastifyRequest, team?: string): Promise<SyncScope> {
  const actor = await actorForSyncKey(s, req.headers['x-api-key']);
  const protocol = header(req, 'x-sync-protocol') === '2' ? 2 : 1;
  const accountIdHeader = header(req, 'x-sync-account-id');
  if (team === undefined) {
    if (accountIdHeader !== undefined && accountIdHeader !== String(actor.accountId)) throw accountChanged();
    const account: SyncAccount = {
      id: actor.accountId,
      kind: 'personal',
      username: actor.username,
      plan: actor.plan,
      hasActiveSubscription: actor.hasActiveSubscription,
    };
    return {
      actor,
      account,
      role: 'owner',
      protocol,
      canWrite: planIncludesSync(account),
      syncBase: syncBaseOf(account),
    };
  }
  if (protocol !== 2 || accountIdHeader === undefined) {
    throw new KilnError(
      428,
      'Team sync requests need the headers X-Sync-Protocol: 2 and X-Sync-Account-ID (the team id from GET /_/sync/accounts).',
      'account-identity-required',
    );
  }
  const found = await findTeam(s, team);
  const role = found ? await roleIn(s, found.id, actor.accountId) : undefined;
  if (!found || !role) throw new KilnError(404, 'No such team, or you are not a member of it.', 'not-found');
  if (accountIdHeader !== String(found.id)) throw accountChanged();
  authorizeTeamChange(role, 'sync', () => new KilnError(404, 'No such team.', 'not-found'), found.username);
  const account: SyncAccount = { ...found, kind: 'team' };
  return { actor, account, role, protocol, canWrite: planIncludesSync(found), syncBase: syncBaseOf(account) };
}

/** 402 `payment-required` unless the scope's plan includes sync (create, edit, rename, move). */
export function assertCanWrite(scope: SyncScope): void {
  if (scope.canWrite) return;
  const msg =
    scope.account.kind === 'team'
      ? `The plan of the team "${scope.account.username}" does not include syncing changes (listing, reading and deleting still work); a team owner can upgrade it to Personal or Maker.`
      : `Your plan does not include syncing changes (listing, reading and deleting still work). ${PAYMENT_REQUIRED_MSG}`;
  throw new KilnError(402, msg, 'payment-required');
}
