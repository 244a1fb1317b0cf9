// What Kiln knows about a request once hosts and auth have run. (The Actor type lives in src/access/.)
import type { Actor } from '../access/actor.ts';

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
  }
}
