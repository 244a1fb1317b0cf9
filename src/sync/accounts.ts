// GET /_/sync/accounts — protocol 2 account discovery: the key owner's personal account and every
// team they belong to, each with its numeric id, role, sync base and whether it can sync now.
// The desktop engine requires every feature below to be `true` and compares ids with `===`.
import type { TeamRole } from '../store/schema.ts';
import { planIncludesSync, teamsOf } from '../teams/teams.ts';
import { syncBaseOf, type SyncCtx } from './scope.ts';
import { allowsTeam } from '../access/authorize.ts';

const SYNC_FEATURES = {
  accountScopes: true,
  accountEvents: true,
  conditionalContent: true,
  conditionalStructure: true,
  completeInventory: true,
} as const;

export interface DiscoveredAccount {
  id: number;
  kind: 'personal' | 'team';
  username: string;
  displayName: string;
  role: TeamRole;
  syncBase: string;
  lifecycle: 'active';
  /** `enabled: false` pauses the engine's session with `reason`. */
  sync: { enabled: boolean; reason: 'payment-required' | 'viewer' | null };
}

/** The accounts the request's key holder may sync (the key is checked by the scope: `ctx.sync`). */
export async function discoverAccounts(ctx: SyncCtx) {
  const { actor } = ctx.sync;
  const personal = { kind: 'personal' as const, username: actor.username };
  const paid = planIncludesSync({ plan: actor.plan, hasActiveSubscription: actor.hasActiveSubscription });
  const accounts: DiscoveredAccount[] = [
    {
      id: actor.accountId,
      ...personal,
      displayName: actor.username,
      role: 'owner',
      syncBase: syncBaseOf(personal),
      lifecycle: 'active',
      sync: { enabled: paid, reason: paid ? null : 'payment-required' },
    },
  ];
  for (const t of await teamsOf(ctx, actor.accountId)) {
    const reason = !allowsTeam(t.role, 'sync') ? 'viewer' : planIncludesSync(t) ? null : 'payment-required';
    accounts.push({
      id: t.id,
      kind: 'team',
      username: t.username,
      displayName: t.username,
      role: t.role,
      syncBase: syncBaseOf({ kind: 'team', username: t.username }),
      lifecycle: 'active',
      sync: { enabled: reason === null, reason },
    });
  }
  return {
    success: true as const,
    protocol: 2 as const,
    features: SYNC_FEATURES,
    actor: { id: actor.accountId, username: actor.username },
    accounts,
  };
}
