// The only way a use case gets a node: `open` loads it and judges the ctx's caller for an action on it in one
// step, through the access table (src/access/authorize.ts). A refusal is the table's registered answer: a
// private node the caller may not see answers exactly like a missing one (404), a team's viewer changing
// a file 403 `viewer`, anyone else the table's row. Like PocketBase's rule-scoped fetch: no door decides
// access by hand, and a new door (MCP, `kiln sync`) reuses it.
import type { Caller, Scope } from '../access/caller.ts';
import type { Action } from '../access/table.ts';
import type { Db, Row, TeamRole } from '../store/schema.ts';
import { isSystem } from '../access/caller.ts';
import { allows, authorize, hostResource, resourceOf, type Standing } from '../access/authorize.ts';
import { nodeById, ownerNodesNamed } from '../store/nodes.ts';
import { teamRole } from '../store/accounts.ts';
import { splitPath } from '../core/names.ts';
import { forbidden, notFound } from '../errors.ts';

type NodeRow = Row<'nodes'>;

/** A node by id, or by its path in an account's tree (`a/b/doc.html`, case-insensitive). */
export type NodeRef = number | { ownerId: number; path: string };

export interface Nodes {
  /** The node, when the caller may do `action` on it; else the table's refusal (404 for a missing one, and for
   *  one of another `type` than the door takes: a folder is not a document to an editor). */
  open(ref: NodeRef, action: Action, type?: NodeRow['type']): Promise<NodeRow>;
  /** `open` for a node already in hand (a row a listing returned): the table's refusal, or the node. */
  check(node: NodeRow, action: Action): Promise<NodeRow>;
  /** Whether the caller may do `action` on the node: for what a page offers (edit controls, menus), never
   *  to let a change through (that is `open`). */
  may(node: NodeRow, action: Action): Promise<boolean>;
  /** Whether the node is within the caller's reach at all, whatever it asks of it: on a document host that
   *  host's nodes only, within a scope its account's (what answers 404 before the table is asked). */
  reaches(node: NodeRow): boolean;
  /** `may`, answered at once from the caller's role in the node's account as already looked up (by an `open`,
   *  `check`, `may` or `standingOn` of a node of that account; unknown: false): for a judge that cannot wait,
   *  an open stream's as events change the node under it (the node as it is now). */
  mayNow(node: NodeRow, action: Action): boolean;
  /** A document host as the table judges it (its account's own regular document: the message bus, who keeps
   *  its pages, who holds a session there): nothing, or the table's refusal. */
  openHost(accountId: number, action: Action): Promise<void>;
  /** Whether `openHost` would let the caller through. */
  mayOnHost(accountId: number, action: Action): Promise<boolean>;
  /** Where the caller stands toward the node: for a use case that records how it was let in (a share guest's
   *  save is named so in the history). */
  standingOn(node: NodeRow): Promise<Standing>;
  /** The caller's role in a team account; null: not a member (or the caller's own account). */
  roleIn(accountId: number): Promise<TeamRole | null>;
  /** A new place in an account's tree (a create, an upload, where a move or rename puts a node: `path` is the
   *  node's full path) is inside the caller's scope: else 403 `outside-scope` (a read-only scope: 403
   *  `read-only-key`). The table still decides the change itself (the parent folder's, or the tree's). */
  assertPlace(ownerId: number, path: string): void;
}

/** The node at a path of an account's tree (any type), or undefined. */
export async function nodeAtPath(db: Db, ownerId: number, relPath: string): Promise<NodeRow | undefined> {
  const parts = splitPath(relPath.replace(/^\/+/, ''));
  if (typeof parts === 'string') return undefined;
  const folderKey = parts.slice(0, -1).join('/').normalize('NFC').toLowerCase();
  const rows = await ownerNodesNamed(db, ownerId, parts[parts.length - 1].normalize('NFC'));
  return rows.find((r) => r.path.toLowerCase() === folderKey);
}

/** THE refusal of a change asked with a read-only key. */
export function readOnly() {
  return forbidden('This key is read-only: it reads documents and changes none.', 'read-only-key');
}

function load(db: Db, ref: NodeRef): Promise<NodeRow | undefined> {
  if (typeof ref === 'number')
    return Number.isSafeInteger(ref) && ref > 0 ? nodeById(db, ref) : Promise.resolve(undefined);
  return nodeAtPath(db, ref.ownerId, ref.path);
}

/** THE refusal of a new place outside a scope's account or folder. */
function outsideScope(scope: Scope) {
  const where = scope.folder ? `the folder "${scope.folder}"` : 'one account';
  return forbidden(`This key reaches only ${where}: nothing can be made or put outside it.`, 'outside-scope');
}

/** What only reads: every other action changes something, and a read-only scope refuses it. */
const READS: ReadonlySet<Action> = new Set<Action>(['view', 'versions', 'dashboard']);

/** The node is inside the scope: its account, and at or below its folder. */
function withinScope(scope: Scope, node: NodeRow): boolean {
  return placeWithin(scope, node.owner_id, node.path ? `${node.path}/${node.name}` : node.name);
}

/** A full path of an account's tree is inside the scope: its account, and at or below its folder. */
function placeWithin(scope: Scope, ownerId: number, path: string): boolean {
  if (scope.accountId !== null && ownerId !== scope.accountId) return false;
  return folderHolds(scope.folder, path);
}

/** The node (its parent's `path` and its `name`) is the folder or below it; null: anywhere. */
export function underFolder(folder: string | null, node: { path: string; name: string }): boolean {
  return folderHolds(folder, node.path ? `${node.path}/${node.name}` : node.name);
}

/** A full path is the folder or below it (case-insensitive, NFC). */
function folderHolds(folder: string | null, path: string): boolean {
  if (!folder) return true;
  const full = path
    .replace(/^\/+|\/+$/g, '')
    .normalize('NFC')
    .toLowerCase();
  const f = folder.normalize('NFC').toLowerCase();
  return full === f || full.startsWith(`${f}/`);
}

/** The nodes as this caller may reach them. */
export function nodesFor(db: Db, caller: Caller): Nodes {
  async function roleIn(accountId: number): Promise<TeamRole | null> {
    const actor = caller.actor;
    if (!actor || actor.accountId === accountId) return null;
    const known = caller.roles.get(accountId);
    if (known !== undefined) return known;
    // On a document host only the host's role counts (resolved with the caller): a session there carries
    // no rights beyond that host.
    const role = caller.host !== null ? null : ((await teamRole(db, accountId, actor.accountId)) ?? null);
    caller.roles.set(accountId, role);
    return role;
  }
  async function standingOn(node: NodeRow): Promise<Standing> {
    return { actor: caller.actor, shareGuest: caller.shareGrant(node), teamRole: await roleIn(node.owner_id) };
  }
  /** On a document host, another account's node is not there at all; nor is one outside the caller's scope. */
  const reachable = (node: NodeRow | undefined): node is NodeRow =>
    !!node &&
    (caller.host === null || node.owner_id === caller.host) &&
    (caller.scope === null || withinScope(caller.scope, node));
  /** A host the caller reaches: any from the main app, only its own from a document host, its scope's account. */
  const reachesHost = (accountId: number) =>
    (caller.host === null || caller.host === accountId) &&
    (caller.scope?.accountId == null || caller.scope.accountId === accountId);
  const refusedChange = (action: Action) => !!caller.scope?.readOnly && !READS.has(action);
  async function hostStanding(accountId: number): Promise<Standing> {
    return { actor: caller.actor, teamRole: await roleIn(accountId) };
  }
  async function check(node: NodeRow, action: Action): Promise<NodeRow> {
    if (!reachable(node)) throw notFound();
    if (isSystem(caller)) return node;
    authorize(await standingOn(node), resourceOf(node), action);
    // The person may; a read-only scope still refuses a change (after the table, so it tells nobody more).
    if (refusedChange(action)) throw readOnly();
    return node;
  }
  return {
    async open(ref, action, type) {
      const node = await load(db, ref);
      if (!node || (type && node.type !== type)) throw notFound();
      return check(node, action);
    },
    check,
    async may(node, action) {
      if (!reachable(node)) return false;
      if (isSystem(caller)) return true;
      if (refusedChange(action)) return false;
      return allows(await standingOn(node), resourceOf(node), action);
    },
    reaches: reachable,
    mayNow(node, action) {
      if (!reachable(node)) return false;
      if (isSystem(caller)) return true;
      if (refusedChange(action)) return false;
      const actor = caller.actor;
      const teamRole = !actor || actor.accountId === node.owner_id ? null : caller.roles.get(node.owner_id);
      if (teamRole === undefined) return false;
      return allows({ actor, shareGuest: caller.shareGrant(node), teamRole }, resourceOf(node), action);
    },
    async openHost(accountId, action) {
      if (!reachesHost(accountId)) throw notFound();
      if (isSystem(caller)) return;
      authorize(await hostStanding(accountId), hostResource(accountId), action);
      if (refusedChange(action)) throw readOnly();
    },
    async mayOnHost(accountId, action) {
      if (!reachesHost(accountId)) return false;
      if (isSystem(caller)) return true;
      if (refusedChange(action)) return false;
      return allows(await hostStanding(accountId), hostResource(accountId), action);
    },
    standingOn,
    roleIn,
    assertPlace(ownerId, path) {
      const scope = caller.scope;
      if (!scope) return;
      if (scope.readOnly) throw readOnly();
      if (!placeWithin(scope, ownerId, path)) throw outsideScope(scope);
    },
  };
}
