// What a use case runs with: the caller it acts for and the ports it uses. `(ctx, input)` is every use case's
// shape; each names the ports it reads (`Pick<Ctx, 'caller' | 'nodes' | 'database'>`), not the whole of
// Services. A request's ctx is made once, after its caller is resolved (src/http/auth.ts); the CLI, sweeps
// and migrations make theirs with the SYSTEM caller.
import type { Services } from './services.ts';
import type { Caller } from './access/caller.ts';
import { nodesFor, type Nodes } from './nodes/open.ts';

export interface Ctx extends Services {
  caller: Caller;
  /** Nodes, loaded only through the access table for this caller. */
  nodes: Nodes;
}

/** The ctx of one caller over these services (an HTTP layer's services keep their extra parts). */
export function contextOf<S extends Services>(s: S, caller: Caller): S & Ctx {
  return { ...s, caller, nodes: nodesFor(s.database.db, caller) };
}
