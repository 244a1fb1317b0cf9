// Classifies a request and runs the check the access table names for it.
import type { Actor } from './actor.ts';
import type { NodeType, TeamRole } from '../store/schema.ts';
import { KilnError, forbidden, notFound } from '../errors.ts';
import { lookup, type Action, type Check, type ResourceType, type UserType } from './table.ts';

/** The parts of a node that decide access. */
export interface Resource {
  ownerId: number;
  type: NodeType;
  visibility: 'public' | 'private';
  enableSignups: boolean;
  sourceNodeId: number | null;
}

export interface Caller {
  actor: Actor | null;
  /** True when a valid share token (cookie or ?token=) grants access to this resource. */
  shareGuest?: boolean;
}

function userTypeOf(caller: Caller): UserType {
  const a = caller.actor;
  if (!a) return caller.shareGuest ? 'app_user' : 'no_auth';
  if (a.isSuperadmin) return 'admin';
  return a.accountType;
}

function resourceTypeOf(r: Resource | null): ResourceType {
  if (!r) return 'main_app';
  if (r.type === 'folder') return 'folder';
  if (r.type === 'upload') return 'upload';
  if (r.enableSignups) return 'multi_tenant';
  if (r.sourceNodeId !== null) return 'instance';
  return 'regular_site';
}

const owns = (c: Caller, r: Resource | null) => !!c.actor && !!r && r.ownerId === c.actor.accountId;

const CHECKS: Record<Check, (c: Caller, r: Resource | null) => KilnError | null> = {
  allow: () => null,
  // A private resource answers exactly like a missing one.
  visible: (c, r) => (!r || r.visibility === 'public' || owns(c, r) ? null : notFound()),
  visible_or_guest: (c, r) => (!r || r.visibility === 'public' || owns(c, r) || c.shareGuest ? null : notFound()),
  owner: (c, r) => (owns(c, r) ? null : notOwner()),
  confirmed_owner: (c, r) =>
    !owns(c, r)
      ? notOwner()
      : c.actor!.emailConfirmed
        ? null
        : forbidden('Confirm your email address first.', 'email-unconfirmed'),
  owner_or_guest: (c, r) => (owns(c, r) || c.shareGuest ? null : notOwner()),
  signed_in: (c) => (c.actor ? null : loginRequired()),
  login: () => loginRequired(),
  deny: () => forbidden(),
};

function notOwner() {
  // The spec classifies a failed ownership condition as 400.
  return new KilnError(400, 'Only the owner can do that.', 'not-owner');
}
function loginRequired() {
  return new KilnError(401, 'Sign in first.', 'login-required');
}

/** A private resource that the caller may not see: to them it does not exist, whatever they ask of it
 *  (same status and body as a missing name, so no route tells the two apart). */
function hidden(c: Caller, r: Resource | null): boolean {
  return !!r && r.visibility === 'private' && !owns(c, r) && !c.shareGuest && userTypeOf(c) !== 'admin';
}

/** Throws the refusal for this caller, resource and action, or returns the check that passed. */
export function authorize(caller: Caller, resource: Resource | null, action: Action): Check {
  if (hidden(caller, resource)) throw notFound();
  const check = lookup(userTypeOf(caller), resourceTypeOf(resource), action);
  if (!check) throw forbidden();
  const refusal = CHECKS[check](caller, resource);
  if (refusal) throw refusal;
  return check;
}

/** `authorize` for actions only a signed-in person can pass: returns that person (call sites need no
 *  `req.actor!`). */
export function authorizeActor(caller: Caller, resource: Resource | null, action: Action): Actor {
  authorize(caller, resource, action);
  if (!caller.actor) throw loginRequired();
  return caller.actor;
}

/** A team member's role decides what they may do with the team's files and members (the `team_*`
 *  rows of the table). `refusal` is what a member without that right is told. No role: not a member. */
export function allowsTeam(role: TeamRole | null | undefined, action: Action): boolean {
  return !!role && lookup(`team_${role}`, 'team', action) === 'allow';
}

export function authorizeTeam(role: TeamRole | null | undefined, action: Action, refusal: () => KilnError): void {
  if (!allowsTeam(role, action)) throw refusal();
}

/** True when `authorize` would let this through: for decisions that are not refusals (e.g. whether a
 *  page may show edit controls). */
export function allows(caller: Caller, resource: Resource | null, action: Action): boolean {
  if (hidden(caller, resource)) return false;
  const check = lookup(userTypeOf(caller), resourceTypeOf(resource), action);
  return check !== null && CHECKS[check](caller, resource) === null;
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
