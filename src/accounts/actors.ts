// The actor of a person: behind a session token (here) or a sync key (src/sync/keys.ts), from their row.
import type { PersonRow } from '../store/accounts.ts';
import type { Db } from '../store/schema.ts';
import type { Actor } from '../access/actor.ts';
import { sessionFor } from './sessions.ts';
import { effectivePlan } from '../billing/plans.ts';

/** The actor a person's row makes, writing as `writer`; null when the account is suspended. */
export function actorOfPerson(row: PersonRow, writer: string): Actor | null {
  // A suspended account is signed in nowhere.
  if (row.suspended_at !== null) return null;
  return {
    accountId: row.id,
    username: row.username,
    email: row.email,
    accountType: row.account_type,
    isSuperadmin: row.is_superadmin === 1,
    emailConfirmed: row.email_confirmed === 1,
    // The tier whose limits apply: a paid tier whose subscription ended counts as free (src/billing/plans.ts).
    plan: effectivePlan({ plan: row.plan, hasActiveSubscription: row.has_active_subscription === 1 }),
    hasActiveSubscription: row.has_active_subscription === 1,
    writer,
  };
}

/** The signed-in person of a session token on a host (null: the main app), or null. */
export async function actorForSessionToken(
  db: Db,
  token: string,
  host: string | null,
  now: Date,
): Promise<Actor | null> {
  const session = await sessionFor(db, token, host, now);
  const actor = session && actorOfPerson(session.person, `session:${session.id}`);
  return actor && { ...actor, loginId: session!.loginId, sessionEnds: session!.expiresAt };
}
