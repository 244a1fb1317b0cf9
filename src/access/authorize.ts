// Classifies a request and runs the check the access table names for it.
import type { Actor } from './actor.ts';
import type { NodeType, TeamRole } from '../store/schema.ts';
import { KilnError, forbidden, notFound } from '../errors.ts';
import { lookup, ruleOf, type Action, type Check, type ResourceType, type UserType } from './table.ts';

/** The parts of a node that decide access. */
export interface Resource {
  ownerId: number;
  type: NodeType;
  visibility: 'public' | 'private';
  enableSignups: boolean;
  sourceNodeId: number | null;
}

/** What a request acts on: a node (the parts of it that decide access), a team (its files and
 *  members, as one resource), or nothing in particular (`null`: the main app). */
export type Target = Resource | 'team' | null;

/** Where a caller stands toward one target: the facts of the request (the person) and those that depend on the
 *  target (its share grant, the caller's role in its team). src/nodes/open.ts makes it from the request's
 *  Caller (src/access/caller.ts); the table judges it. */
export interface Standing {
  actor: Actor | null;
  /** True when a valid share token (cookie or ?token=) grants access to this resource. */
  shareGuest?: boolean;
  /** The caller's role in the team that owns the target (the team itself, or one of its files: src/nodes/open.ts
   *  standingOn); none: not a member, or not a team's. */
  teamRole?: TeamRole | null;
}

/** The caller's user type in the table. On a team it is their role there; someone who is not a member
 *  has none (no row: 403). A share guest nobody signed in as counts as an app user (the spec). */
function userTypeOf(c: Standing, t: Target): UserType | null {
  if (t === 'team') return c.teamRole ? `team_${c.teamRole}` : null;
  const a = c.actor;
  if (!a) return c.shareGuest ? 'app_user' : 'no_auth';
  if (a.isSuperadmin) return 'admin';
  return a.accountType;
}

function resourceTypeOf(t: Target): ResourceType {
  if (!t) return 'main_app';
  if (t === 'team') return 'team';
  if (t.type === 'folder') return 'folder';
  if (t.type === 'upload') return 'upload';
  if (t.enableSignups) return 'multi_tenant';
  if (t.sourceNodeId !== null) return 'instance';
  return 'regular_site';
}

/** The node a check judges; the main app and a team have none. */
const nodeOf = (t: Target): Resource | null => (t && t !== 'team' ? t : null);

/** The caller owns the resource: it is theirs, or its team's and they are an owner or editor there (`teamRole`
 *  is only ever the caller's role in the team that owns the resource: standingOn). */
const owns = (c: Standing, r: Resource | null) =>
  !!c.actor && !!r && (r.ownerId === c.actor.accountId || c.teamRole === 'owner' || c.teamRole === 'editor');
/** The caller may see the resource when private: an owner, or any member of the team that owns it. */
const sees = (c: Standing, r: Resource | null) => owns(c, r) || (!!c.actor && !!r && !!c.teamRole);

/** A refusal, made only when it is thrown: `allows` (asked on every page view) builds no error. */
type Refusal = () => KilnError;

const CHECKS: Record<Check, (c: Standing, r: Resource | null) => Refusal | null> = {
  allow: () => null,
  // A private resource answers exactly like a missing one.
  visible: (c, r) => (!r || r.visibility === 'public' || sees(c, r) ? null : notFound),
  visible_or_guest: (c, r) => (!r || r.visibility === 'public' || sees(c, r) || c.shareGuest ? null : notFound),
  owner: (c, r) => (owns(c, r) ? null : notOwnerOf(c)),
  confirmed_owner: (c, r) => (!owns(c, r) ? notOwnerOf(c) : c.actor!.emailConfirmed ? null : emailUnconfirmed),
  owner_or_guest: (c, r) => (owns(c, r) || c.shareGuest ? null : notOwnerOf(c)),
  signed_in: (c) => (c.actor ? null : loginRequired),
  login: () => loginRequired,
  host_owner: (c, r) =>
    owns(c, r) ? null : !c.actor ? loginRequired : c.teamRole === 'viewer' ? viewerRefusal : notHostOwner,
  host_member: (c, r) => (sees(c, r) ? null : !c.actor ? loginRequired : notHostOwner),
  deny: () => forbidden,
};

/** A team's viewers read its files and change none, by any door: 403 viewer; anyone else is not the owner. */
const notOwnerOf = (c: Standing): Refusal => (c.teamRole === 'viewer' ? viewerRefusal : notOwner);

function notOwner() {
  // The spec classifies a failed ownership condition as 400.
  return new KilnError(400, 'Only the owner can do that.', 'not-owner');
}
function notHostOwner() {
  return forbidden('Only the owner of this host may do that.');
}
function loginRequired() {
  return new KilnError(401, 'Sign in first.', 'login-required');
}
function emailUnconfirmed() {
  return forbidden('Confirm your email address first.', 'email-unconfirmed');
}

/** The check the table names for this caller, target and action; `null`: no rule (403). */
function checkFor(c: Standing, t: Target, action: Action): Check | null {
  const user = userTypeOf(c, t);
  return user && lookup(user, resourceTypeOf(t), action);
}

/** What the table answers: the refusal, or null when the caller may. */
function refusalOf(c: Standing, t: Target, action: Action): Refusal | null {
  const check = checkFor(c, t, action);
  return check ? CHECKS[check](c, nodeOf(t)) : forbidden;
}

/** A private resource that the caller may not see (the table's `view` rows refuse them): to them it
 *  does not exist, whatever they ask of it (same status and body as a missing name, so no route tells
 *  the two apart). */
function hidden(c: Standing, t: Target): boolean {
  const r = nodeOf(t);
  return !!r && r.visibility === 'private' && refusalOf(c, t, 'view') !== null;
}

/** Throws the refusal for this caller, target and action, or returns the check that passed. */
export function authorize(caller: Standing, target: Target, action: Action): Check {
  if (hidden(caller, target)) throw notFound();
  const refusal = refusalOf(caller, target, action);
  if (refusal) throw refusal();
  return checkFor(caller, target, action)!;
}

/** `authorize` for actions only a signed-in person can pass: returns that person (call sites need no
 *  `req.actor!`). */
export function authorizeActor(caller: Standing, target: Target, action: Action): Actor {
  authorize(caller, target, action);
  if (!caller.actor) throw loginRequired();
  return caller.actor;
}

/** True when `authorize` would let this through: for decisions that are not refusals (e.g. whether a
 *  page may show edit controls). */
export function allows(caller: Standing, target: Target, action: Action): boolean {
  return !hidden(caller, target) && refusalOf(caller, target, action) === null;
}

/** The row of the table that decides this request (its expanded key), or null when none does: for
 *  audits and tests. */
export function ruleFor(caller: Standing, target: Target, action: Action): string | null {
  const user = userTypeOf(caller, target);
  return user && ruleOf(user, resourceTypeOf(target), action);
}

/** `allows` for a team member's role on the team's files and members (the `team_*` rows of the table).
 *  No role: not a member. */
export function allowsTeam(role: TeamRole | null | undefined, action: Action): boolean {
  return allows({ actor: null, teamRole: role }, 'team', action);
}

/** `authorize` for a team member's role; `refusal` is what a member without that right is told. */
export function authorizeTeam(role: TeamRole | null | undefined, action: Action, refusal: () => KilnError): void {
  if (!allowsTeam(role, action)) throw refusal();
}

/** THE refusal of a team member whose role does not let them change the team's files (a viewer): one
 *  answer, 403 `viewer`, whichever door they try (dashboard, uploads, sync API, the use cases). */
export function viewerRefusal(team?: string): KilnError {
  const whose = team ? `the team "${team}"` : 'this team';
  return forbidden(
    `You are a viewer of ${whose}: changing or syncing its files needs an owner or editor role.`,
    'viewer',
  );
}

/** A change to a team's files (`manage`, or `sync` through the sync API) by the caller's role there:
 *  a member whose role does not allow it gets `viewerRefusal`; someone who is not a member gets
 *  `notMember()` (each door hides a team from strangers in its own way). */
export function authorizeTeamChange(
  role: TeamRole | null | undefined,
  action: 'manage' | 'sync',
  notMember: () => KilnError,
  team?: string,
): void {
  if (allowsTeam(role, action)) return;
  throw role ? viewerRefusal(team) : notMember();
}

/** The caller's own uploads, before one is read: what the upload editor asks the table about (it opens
 *  only uploads of the signed-in person, so nobody signed in owns them). */
export function ownUploads(actor: Actor | null): Resource {
  return {
    ownerId: actor?.accountId ?? 0,
    type: 'upload',
    visibility: 'public',
    enableSignups: false,
    sourceNodeId: null,
  };
}

/** A document host as the access table judges it (the `bus` action): its account's own regular document. */
export function hostResource(accountId: number): Resource {
  return { ownerId: accountId, type: 'site', visibility: 'public', enableSignups: false, sourceNodeId: null };
}

/** The access-relevant part of a node row. */
export function resourceOf(node: {
  owner_id: number;
  type: NodeType;
  visibility: 'public' | 'private';
  enable_signups: number;
  source_node_id: number | null;
}): Resource {
  return {
    ownerId: node.owner_id,
    type: node.type,
    visibility: node.visibility,
    enableSignups: node.enable_signups === 1,
    sourceNodeId: node.source_node_id,
  };
}
