// Who a sync request acts for, and in which account's tree. Every sync door (the API, its stream, the control
// lane) starts here, once per request, from the request's caller (src/http/auth.ts resolved the key):
//
//   X-API-Key           → the key's owner (401 missing / not hcsk_ / unknown / expired / revoked, 403 suspended:
//                         the refusal the auth hook kept in `caller.refused`)
//   base /_/sync        → the owner's own account; protocol-2 headers are accepted, and an
//                         X-Sync-Account-ID naming another account answers 409 `account-changed`
//   base /_/team/T/sync → team T: needs X-Sync-Protocol: 2 and X-Sync-Account-ID (428
//                         `account-identity-required`), the id must be T's (409 `account-changed`),
//                         the owner must be a member (404 `not-found`) and not a viewer (403 `viewer`: the
//                         table's `team:sync` row, asked with the role `ctx.nodes.roleIn` looked up)
//
// A key can do what its owner can to the owner's nodes and to those of every team where the owner is
// owner or editor. Listing, reading and deleting need nothing more; creating, editing, renaming and
// moving need the scope account's plan to include sync (402 `payment-required`): the person's own plan
// on /_/sync, the team's plan on a team base.
//
// The scope rides on the use cases' ctx (`SyncCtx`, `ctx.sync`), not in their input: like the caller it is
// who acts and where, resolved once from the credential and the headers and the same for every use case of
// the request; the input is what the request asks for (its body and path).
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan, TeamRole } from '../store/schema.ts';
import { KilnError, conflict, unauthorized } from '../errors.ts';
import { PAYMENT_REQUIRED_MSG, keyStillValid } from './keys.ts';
import { planIncludesSync, roleIn } from '../teams/teams.ts';
import { allowsTeam, authorizeTeamChange } from '../access/authorize.ts';
import { teamRow } from '../store/accounts.ts';
import type { Services } from '../services.ts';

export interface SyncAccount {
  id: number;
  kind: 'personal' | 'team';
  username: string;
  plan: Plan;
  hasActiveSubscription: boolean;
}

export interface SyncScope {
  /** The key's owner (the caller's person). */
  actor: Actor;
  /** The id of the request's sync key; null for an OAuth token (src/oauth/token.ts), which reaches the API's
   *  requests but not its stream or control lane. */
  keyId: number | null;
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

/** What a sync use case runs with: the ports it names, and the request's scope. */
export type SyncCtx<P extends keyof Ctx = keyof Ctx> = Pick<Ctx, P> & { sync: SyncScope };

/** The protocol-2 headers of a sync request, as sent (trimmed; empty: absent). */
export interface SyncHeaders {
  protocol?: string;
  accountId?: string;
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

/** The key's person, or the 401/403 the desktop client knows: the refused key's own (missing-key,
 *  invalid-key, revoked-key, expired-key, account-suspended), or `missing-key` when no key came (a browser
 *  session counts for nothing here). An OAuth token's person too (no key id: its scope rides on the caller). */
function keyHolder(ctx: Pick<Ctx, 'caller'>): { actor: Actor; keyId: number | null } {
  const { caller } = ctx;
  if (caller.refused) throw caller.refused;
  const key = caller.via === 'key' && caller.actor ? /^(key|oauth):(\d+)$/.exec(caller.actor.writer) : null;
  if (!key || !caller.actor) throw unauthorized('Send your sync key in the X-API-Key header.', 'missing-key');
  return { actor: caller.actor, keyId: key[1] === 'key' ? Number(key[2]) : null };
}

/** The scope of a sync request: `team` is the `<team>` of `/_/team/<team>/sync/...`, or undefined. */
export async function syncScope(
  ctx: Pick<Ctx, 'caller' | 'nodes' | 'database'>,
  team: string | undefined,
  headers: SyncHeaders,
): Promise<SyncScope> {
  const { actor, keyId } = keyHolder(ctx);
  const protocol = headers.protocol === '2' ? 2 : 1;
  const accountIdHeader = headers.accountId;
  if (team === undefined) {
    if (accountIdHeader !== undefined && accountIdHeader !== String(actor.accountId)) throw accountChanged();
    const account: SyncAccount = {
      id: actor.accountId,
      kind: 'personal',
      username: actor.username,
      plan: actor.plan,
      hasActiveSubscription: actor.hasActiveSubscription,
    };
    const canWrite = planIncludesSync(account);
    return { actor, keyId, account, role: 'owner', protocol, canWrite, syncBase: syncBaseOf(account) };
  }
  if (protocol !== 2 || accountIdHeader === undefined) {
    throw new KilnError(
      428,
      'Team sync requests need the headers X-Sync-Protocol: 2 and X-Sync-Account-ID (the team id from GET /_/sync/accounts).',
      'account-identity-required',
    );
  }
  const row = await teamRow(ctx.database.db, team);
  const role = row ? await ctx.nodes.roleIn(row.id) : null;
  if (!row || !role) throw new KilnError(404, 'No such team, or you are not a member of it.', 'not-found');
  if (accountIdHeader !== String(row.id)) throw accountChanged();
  authorizeTeamChange(role, 'sync', () => new KilnError(404, 'No such team.', 'not-found'), row.username);
  const account: SyncAccount = {
    id: row.id,
    kind: 'team',
    username: row.username,
    plan: row.plan,
    hasActiveSubscription: row.has_active_subscription === 1,
  };
  return { actor, keyId, account, role, protocol, canWrite: planIncludesSync(account), syncBase: syncBaseOf(account) };
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

/** Whether an open stream's scope still holds, asked afresh (not the request's memo): its key is active and,
 *  on a team base, its holder still a member whose role may sync (the table's `team:sync` row). */
export async function scopeStillHeld(s: Services, scope: SyncScope): Promise<boolean> {
  if (scope.keyId === null || !(await keyStillValid(s, scope.keyId))) return false;
  if (scope.account.kind !== 'team') return true;
  return allowsTeam(await roleIn(s, scope.account.id, scope.actor.accountId), 'sync');
}

/** The scope's sync key id, or 401 `missing-key` for another credential (the stream and the control lane are the
 *  desktop client's, opened with its sync key). */
export function syncKeyIdOf(scope: SyncScope): number {
  if (scope.keyId === null) throw unauthorized('Send your sync key in the X-API-Key header.', 'missing-key');
  return scope.keyId;
}
