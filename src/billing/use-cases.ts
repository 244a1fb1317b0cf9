// Billing's use cases for a signed-in account (main app): what it pays for, and the ways out to Stripe.
// Each asks the table first (the main app's `manage`: a person signed in).
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import { authorizeActor } from '../access/authorize.ts';
import { accountById } from '../store/accounts.ts';
import { planSummary } from './plans.ts';
import { openPortal, paymentsConfigured, startCheckout } from './checkout.ts';

/** The signed-in person whose billing this is; else the table's refusal (401 nobody). */
export function billingActor(ctx: Pick<Ctx, 'caller'>): Actor {
  return authorizeActor({ actor: ctx.caller.actor }, null, 'manage');
}

/** The account's plan, usage and allowances, and whether it can buy (payments set up) or manage a plan. */
export async function billingOverview(ctx: Ctx) {
  const actor = billingActor(ctx);
  return {
    actor,
    summary: await planSummary(ctx, actor.accountId),
    payments: paymentsConfigured(ctx),
    canManage: !!(await accountById(ctx.database.db, actor.accountId))?.stripe_customer_id,
    currency: ctx.config.currency,
  };
}

/** Stripe Checkout for a plan: the URL to send the buyer to. */
export function checkout(ctx: Ctx, input: { plan?: string }): Promise<string> {
  return startCheckout(ctx, billingActor(ctx), input.plan);
}

/** Stripe's Customer Portal for the account: its URL. */
export function billingPortal(ctx: Ctx): Promise<string> {
  return openPortal(ctx, billingActor(ctx));
}
