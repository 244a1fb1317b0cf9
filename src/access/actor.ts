// Who is acting: a signed-in person (browser session), or the holder of a sync or agent key. Use cases take an Actor;
// the HTTP layer finds it (src/http/auth.ts) and the access table judges it (authorize.ts).
import type { AccountType, Plan } from '../store/schema.ts';

export interface Actor {
  accountId: number;
  username: string;
  email: string;
  accountType: AccountType;
  isSuperadmin: boolean;
  emailConfirmed: boolean;
  plan: Plan;
  hasActiveSubscription: boolean;
  /** The session row id (browser) or sync key id: identifies one writer for `changedBy`. */
  writer: string;
  /** Browser sessions: the login the session belongs to (src/accounts/sessions.ts). */
  loginId?: number;
  /** Browser sessions: when the session expires (ISO time): nothing kept for it outlives it (src/http/hot-path.ts). */
  sessionEnds?: string;
  /** What the person acts through, where it has a name they gave it: an agent key's (src/agents/keys.ts). */
  grantName?: string;
}
