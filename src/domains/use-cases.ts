// Custom domains' use cases for a signed-in developer (main app, /_/dashboard/domains): each asks the table
// first (the main app's `manage`: strangers 401, app users 403), then acts on the caller's own domains.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import { authorizeActor } from '../access/authorize.ts';
import { addDomain, listDomains, removeDomain, type DomainInfo } from './domains.ts';

/** The developer whose domains these are; else the table's refusal. */
export function domainManager(ctx: Pick<Ctx, 'caller'>): Actor {
  return authorizeActor({ actor: ctx.caller.actor }, null, 'manage');
}

export function customDomains(ctx: Ctx): Promise<DomainInfo[]> {
  return listDomains(ctx, domainManager(ctx).accountId);
}

/** Adds a domain: `pending`, with its DNS instructions. */
export function addCustomDomain(ctx: Ctx, input: { domain: string }): Promise<DomainInfo> {
  return addDomain(ctx, domainManager(ctx).accountId, input.domain);
}

/** Removes one of the caller's domains (404 for any other). */
export function removeCustomDomain(ctx: Ctx, input: { id: number }): Promise<DomainInfo> {
  return removeDomain(ctx, domainManager(ctx).accountId, input.id);
}
