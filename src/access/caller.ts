// Who is asking: ONE value per request, resolved once from whatever credential came (src/http/auth.ts:
// a session of this host, a sync key on a door that takes keys, share grants, or nothing), or named by the
// code that acts on its own (the CLI, sweeps, migrations: SYSTEM). Use cases receive it in their ctx and
// never look at a request; the access table judges it against each node through `standingOn`
// (src/nodes/open.ts), which adds the facts that depend on the node: the caller's team role in the node's
// account and whether the request holds the node's share grant.
import type { Actor } from './actor.ts';
import type { KilnError } from '../errors.ts';
import type { Row, TeamRole } from '../store/schema.ts';

/** How the caller proved who it is. */
export type Via = 'session' | 'key' | 'none' | 'system';

/** The share grant a request holds for a document: its `share_<sitename>` cookie or `?token=`. Judged per node
 *  (the node row holds the token's hash), so the request's tokens stay with the request. */
export type ShareGrant = (node: Row<'nodes'>) => boolean;

export interface Caller {
  via: Via;
  /** The person acting (the session's, or the key's owner); null for nobody and for the system. */
  actor: Actor | null;
  /** The document host the request came in on (its account id); null on the main app and off HTTP. A caller
   *  on a document host reaches only that host's nodes: a session there carries no rights beyond it. */
  host: number | null;
  /** The caller's role in a team account, by the team's id, as far as it was looked up: the host's is
   *  resolved with the caller (a team's host), others when a node of that team is opened (main app). */
  readonly roles: Map<number, TeamRole | null>;
  /** Whether the request holds a node's share grant. */
  shareGrant: ShareGrant;
  /** What the credential narrows the caller to, below what its person may (an agent's key or token): none for a
   *  session or a sync key, which act with all their person's rights. */
  scope: Scope | null;
  /** A credential that came and was refused (an unknown, expired or revoked key): the doors that need that
   *  credential answer with it; the others treat the caller as nobody. */
  refused: KilnError | null;
}

/** A narrowed credential: it never does more than its person could, and less where it says. */
export interface Scope {
  /** Only this account's nodes (the person's own, or one team's); none: every account the person reaches. */
  accountId: number | null;
  /** Only nodes at or below this folder path of that account (`notes/2026`); none: the whole tree. */
  folder: string | null;
  /** Reads only: every action that changes something is refused (403 `read-only-key`). */
  readOnly: boolean;
}

const noGrant: ShareGrant = () => false;

/** Nobody: no credential, or none that counts here. */
export function anonymous(host: number | null = null, shareGrant: ShareGrant = noGrant): Caller {
  return { via: 'none', actor: null, host, roles: new Map(), shareGrant, scope: null, refused: null };
}

/** A person: a session of this host, or a key's owner. */
export function personCaller(
  via: 'session' | 'key',
  actor: Actor,
  host: number | null,
  shareGrant: ShareGrant = noGrant,
  scope: Scope | null = null,
): Caller {
  return { via, actor, host, roles: new Map(), shareGrant, scope, refused: null };
}

/** Kiln itself (the CLI's account commands, sweeps, migrations, the instance copy of a sign-up): passes every
 *  check, so a use case called by it is never refused for access. Never made from a request. */
export const SYSTEM: Caller = Object.freeze({
  via: 'system',
  actor: null,
  host: null,
  roles: new Map(),
  shareGrant: noGrant,
  scope: null,
  refused: null,
}) as Caller;

export const isSystem = (c: Caller) => c.via === 'system';

/** The caller narrowed to one account's tree (a sync base's: the sync API acts on that tree only): every other
 *  account's node is not there for it (404), as another host's is to a session of one host. A scope that
 *  already names another account reaches nothing (no node belongs to account 0). */
export function withinAccount(caller: Caller, accountId: number): Caller {
  const scope = caller.scope;
  const account = scope?.accountId == null || scope.accountId === accountId ? accountId : 0;
  return {
    ...caller,
    scope: { accountId: account, folder: scope?.folder ?? null, readOnly: scope?.readOnly ?? false },
  };
}
