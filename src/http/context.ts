// What Kiln knows about a request once hosts and auth have run.
import type { AccountType, Plan } from '../store/schema.ts';

export type HostInfo =
  | { kind: 'main' }
  /** `<username>.<root_domain>`: the documents of one account. */
  | { kind: 'account'; accountId: number; username: string }
  /** An active custom domain pointing at an account. */
  | { kind: 'domain'; accountId: number; username: string; domain: string };

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
}

declare module 'fastify' {
  interface FastifyRequest {
    site: HostInfo;
    /** Signed-in person, or null. */
    actor: Actor | null;
  }
}
