// Grants: the rights an open stream was opened on. A stream registers the grants it depends on when
// it attaches (src/sse/hub.ts); when one of them ends — a sync key revoked, a team member removed or
// made a viewer, a browser session ended — `revokeGrants` publishes one `grant-revoked` event on the
// `revocations` channel, which every process's hub subscribes to once, and each hub closes its
// streams that depend on any of the named grants.
//
// Grant names:  session:<session id>   key:<sync key id>   akey:<agent key id>   member:<team id>:<person id>
//
// The hot path (src/http/hot-path.ts) listens too: what it keeps of a signed-in person's page views goes with their
// session, their membership and their role (`role-changed`, for a change that ends no grant).
import type { StreamHub } from '../sse/hub.ts';
import { channels, type EventBus } from './bus.ts';
import { publishSoon } from './publish.ts';

/** What revoking grants uses of the services, part by part (the bus names grants here, so this does not import
 *  src/services.ts). */
export interface RevocationPorts {
  hub: StreamHub;
  events: EventBus;
}

export const grants = {
  /** A browser session (the actor's `writer` is already `session:<id>`). */
  session: (sessionId: number | string) => `session:${sessionId}`,
  /** A sync key (the actor's `writer` is already `key:<id>`). */
  key: (keyId: number) => `key:${keyId}`,
  /** An agent key (the actor's `writer` is already `akey:<id>`). */
  agentKey: (keyId: number) => `akey:${keyId}`,
  /** A person's owner or editor role in a team (what a team sync stream needs). */
  member: (teamId: number, personId: number) => `member:${teamId}:${personId}`,
};

/** Closes, in every process, the open streams that depend on any of these grants, and drops what every
 *  process keeps of the page views they let in. Call it after the change that ends them has committed. This
 *  process's streams close at once, even with Redis away (other processes hear it when the event goes out). The
 *  answer waits for the event while the bus flows (so the next request, to any process, is refused), never while
 *  Redis is away (a sign-out must not: the event waits in the bus's outbox). A failed publish is logged, not
 *  thrown: the state change has committed. */
export async function revokeGrants(s: RevocationPorts, names: string[]): Promise<void> {
  if (names.length === 0) return;
  s.hub.revoke(names);
  await publishSoon(
    s,
    channels.revocations,
    { type: 'grant-revoked', grants: names },
    `the revocation of ${names.join(', ')}`,
  );
}

/** A team member's role changed without ending a grant (`revokeGrants` covers those): every process forgets
 *  what it keeps of the person's page views on the team's host, this one before the change is answered. */
export function roleChanged(s: Pick<RevocationPorts, 'events'>, teamId: number, personId: number): Promise<void> {
  return publishSoon(
    s,
    channels.revocations,
    { type: 'role-changed', teamId, personId },
    `the role change of ${personId} in team ${teamId}`,
  );
}
