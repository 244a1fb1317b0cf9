// What Kiln knows about a request once hosts and auth have run. (The Actor type lives in src/access/.)
import type { Actor } from '../access/actor.ts';
import type { TeamRole } from '../store/schema.ts';

export type HostInfo =
  | { kind: 'main' }
  /** `<username>.<root_domain>`: the documents of one account. */
  | { kind: 'account'; accountId: number; username: string; suspended?: boolean }
  /** An active custom domain pointing at an account. */
  | { kind: 'domain'; accountId: number; username: string; domain: string; suspended?: boolean };

declare module 'fastify' {
  interface FastifyRequest {
    site: HostInfo;
    /** Signed-in person, or null. */
    actor: Actor | null;
    /** On a team's host: the signed-in person's role in the team (members get sessions there), else null. */
    teamRole: TeamRole | null;
  }
}
