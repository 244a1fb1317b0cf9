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
// An agent key (`hcak_`, src/agents/keys.ts) works here too, narrowed to its scope (`narrow`): only its one
// account's base (another: 403 `key-scope`), only its folder (`ctx.nodes` refuses nodes outside it, the listing
// leaves them out, the top level of the tree is not its to add to), and a read-only key changes nothing (403
// `read-only-key`). The stream and the control lane take sync keys only (403 `key-scope`).
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
import { contextOf } from '../context.ts';
import { withinAccount } from '../access/caller.ts';
import type { Actor } from '../access/actor.ts';
import type { Scope } from '../access/caller.ts';
import type { Plan, TeamRole } from '../store/schema.ts';
import { KilnError, conflict, forbidden, unauthorized } from '../errors.ts';
import { readOnly } from '../nodes/open.ts';
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
  /** The id of the request's sync key; null for an agent key or an OAuth token, which reach the API's requests
   *  but not its stream or control lane. */
  keyId: number | null;
  /** What an agent key or OAuth token narrows the request to (its account, folder, reads only); null for a sync
   *  key. */
  narrow: Scope | null;
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

/** The ctx of a sync request's use cases: the scope rides on it, and its caller reaches the scope's account's
 *  tree only (`withinAccount`): another account's node, public or not, is not in the tree the client syncs and
 *  answers 404 `node-not-found` like a missing one (the desktop engine then refreshes the node; a 400 would stop
 *  its session: docs/notes/hyperclay-local-sync.md §5). */
export function syncContext<C extends Ctx>(ctx: C, sync: SyncScope): C & { sync: SyncScope } {
  return { ...contextOf(ctx, withinAccount(ctx.caller, sync.account.id)), sync };
}

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
 *  session counts for nothing here, nor an OAuth token: it acts on /_/mcp only). An agent key's person too (no
 *  key id: its scope rides on the caller). */
function keyHolder(ctx: Pick<Ctx, 'caller'>): { actor: Actor; keyId: number | null } {
  const { caller } = ctx;
  if (caller.refused) throw caller.refused;
  const key = caller.via === 'key' && caller.actor ? /^(a?key):(\d+)$/.exec(caller.actor.writer) : null;
  if (!key || !caller.actor) throw unauthorized('Send your sync key in the X-API-Key header.', 'missing-key');
  return { actor: caller.actor, keyId: key[1] === 'key' ? Number(key[2]) : null };
}

/** 403 `key-scope` when an agent's key or OAuth token asks for an account it was not made for. */
function assertInScope(narrow: Scope | null, account: { id: number; username: string }): void {
  if (narrow?.accountId != null && narrow.accountId !== account.id)
    throw forbidden(`This agent's key or connection does not reach ${account.username}'s files.`, 'key-scope');
}

/** What a sync door takes: the stream and the control lane, sync keys only. */
export interface SyncDoorOptions {
  syncKeysOnly?: boolean;
}

/** The scope of a sync request: `team` is the `<team>` of `/_/team/<team>/sync/...`, or undefined. */
export async function syncScope(
  ctx: Pick<Ctx, 'caller' | 'nodes' | 'database'>,
  team: string | undefined,
  headers: SyncHeaders,
  door: SyncDoorOptions = {},
): Promise<SyncScope> {
  const { actor, keyId } = keyHolder(ctx);
  const narrow = ctx.caller.scope;
  if (narrow && door.syncKeysOnly)
    throw forbidden(
      'The sync stream and its control lane take a sync key (hcsk_…); an agent key reaches files through /_/mcp and the sync API.',
      'key-scope',
    );
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
    assertInScope(narrow, account);
    const canWrite = planIncludesSync(account);
    return { actor, keyId, narrow, account, role: 'owner', protocol, canWrite, syncBase: syncBaseOf(account) };
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
  assertInScope(narrow, row);
  authorizeTeamChange(role, 'sync', () => new KilnError(404, 'No such team.', 'not-found'), row.username);
  const account: SyncAccount = {
    id: row.id,
    kind: 'team',
    username: row.username,
    plan: row.plan,
    hasActiveSubscription: row.has_active_subscription === 1,
  };
  const canWrite = planIncludesSync(account);
  return { actor, keyId, narrow, account, role, protocol, canWrite, syncBase: syncBaseOf(account) };
}

/** 403 `read-only-key` for a read-only agent key, else 402 `payment-required` unless the scope's plan includes
 *  sync (create, edit, rename, move). */
export function assertCanWrite(scope: SyncScope): void {
  // A read-only agent key first: no plan would let it.
  if (scope.narrow?.readOnly) throw readOnly();
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
